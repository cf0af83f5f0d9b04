import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';

/**
 * Where a test runs an activity by hand (what a lost workflow task would have run). Its expected failures
 * (a refused or lost connector call) are the point of the test, so only errors are logged.
 */
export function activityEnvironment(): MockActivityEnvironment {
  return new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') });
}
