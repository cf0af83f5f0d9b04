import { DefaultLogger, Runtime } from '@temporalio/worker';

// Workers in tests log only errors: expected activity failures (declines, outages) would drown the output.
try {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
} catch {
  // Already installed in this process.
}
