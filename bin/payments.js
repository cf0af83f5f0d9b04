#!/usr/bin/env node
// The `payments` command: runs the TypeScript CLI through tsx, so no build step is needed.
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../src/cli/index.ts');
process.exit(await runCli(process.argv.slice(2)));
