import { updateKeyOf } from '../src/ciphers/update-proof';

/**
 * Whether a workflow's update key is the service's own. A workflow started from outside the service (the
 * Temporal UI's "Start Workflow", with an input of the starter's choosing) carries a key its starter holds;
 * its internal updates are refused however they are signed (workflows/proofs.ts).
 */
export function proofActivities(masterKey: string) {
  const serviceKey = updateKeyOf(masterKey);
  return {
    async isServiceUpdateKey(input: { updateKey: string }): Promise<boolean> {
      return input.updateKey === serviceKey;
    },
  };
}
