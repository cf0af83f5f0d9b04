import type { WorkflowClientInterceptor } from '@temporalio/client';
import { updateKeyOf } from '../../src/ciphers/update-proof';

/**
 * Starts workflows the way the service does (src/transactions/create.ts): with the service's update key
 * in their input, so the workflows a test starts directly check their internal updates' proofs too.
 */
export function startedWithUpdateKey(masterKey: string): WorkflowClientInterceptor {
  const updateKey = updateKeyOf(masterKey);
  const keyed = (args: unknown[]) => {
    const [input, ...rest] = args;
    const plain = typeof input === 'object' && input !== null && !Array.isArray(input);
    return plain && !('updateKey' in input) ? [{ ...input, updateKey }, ...rest] : args;
  };
  return {
    startWithDetails: (input, next) =>
      next({ ...input, options: { ...input.options, args: keyed(input.options.args) } }),
    startUpdateWithStart: (input, next) =>
      next({
        ...input,
        workflowStartOptions: {
          ...input.workflowStartOptions,
          args: keyed(input.workflowStartOptions.args),
        },
      }),
  };
}

/** The service's client options for a test, starting workflows as the service does. */
export function testClientOptions<
  Options extends { interceptors: { workflow: WorkflowClientInterceptor[] } },
>(options: Options, masterKey: string): Options {
  return {
    ...options,
    interceptors: {
      ...options.interceptors,
      workflow: [...options.interceptors.workflow, startedWithUpdateKey(masterKey)],
    },
  };
}
