#!/usr/bin/env node
// The `payments` command: the TypeScript CLI, run from its bundle (bin/bundled.js), so no build step is
// needed.
import { importBundled } from './bundled.js';

const { runCli } = await importBundled('src/cli/index.ts');
process.exit(await runCli(process.argv.slice(2)));
