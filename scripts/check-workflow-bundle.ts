// Bundles workflows/index.ts as the worker will: a non-deterministic import fails here, not in production.
import { workflowBundle } from '../src/process/worker';

const bundle = await workflowBundle();
process.stdout.write(`workflow bundle ok (${Math.round(bundle.code.length / 1024)} KiB)\n`);
