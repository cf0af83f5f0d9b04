#!/usr/bin/env node
// `npm start`: the service (src/process/main.ts: the API, the worker or both, as ROLE says), run from its
// bundle (bin/bundled.js), so no build step is needed.
import { importBundled } from './bundled.js';

const { main } = await importBundled('src/process/main.ts');
await main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
