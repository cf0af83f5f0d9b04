import { DefaultLogger, Runtime } from '@temporalio/worker';

// Workers in tests log only what needs attention.
try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // Already installed in this process.
}
