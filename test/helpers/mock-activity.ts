import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';

/**
 * Where a test runs an activity by hand (what a lost workflow task would have run). Its expected failures
 * (a refused or lost connector call) are the point of the test, so only errors are logged. `info` sets
 * the activity's context (which workflow run it runs for).
 */
export function activityEnvironment(info?: ConstructorParameters<typeof MockActivityEnvironment>[0]) {
  return new MockActivityEnvironment(info, { logger: new DefaultLogger('ERROR') });
}
