// The floor a transaction create stands on: a workflow started by update-with-start whose update answers
// at once. Only the bench bundles it (bench/floors/server.ts).
import { condition, defineUpdate, setHandler } from '@temporalio/workflow';

export const answerUpdate = defineUpdate<{ ok: true }>('answer');

export async function noop(): Promise<void> {
  let answered = false;
  setHandler(answerUpdate, () => {
    answered = true;
    return { ok: true as const };
  });
  await condition(() => answered);
}
