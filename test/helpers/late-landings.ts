import { OutcomeUnknownError } from '../../activities/connectors/errors';

/**
 * Requests whose answer is lost while they are still on their way to the provider, where they land later
 * (payout-late-send.test.ts, card-late-send.test.ts). `lose` makes the request's own call `delay` ms on and
 * throws the lost answer now; `landed` waits for every landing, before the provider's books are read and
 * before the environment closes.
 */
export function lateLandings() {
  const landings: Promise<unknown>[] = [];
  return {
    lose(delay: number, land: () => Promise<unknown>): never {
      landings.push(new Promise((resolve) => setTimeout(resolve, delay)).then(land).catch(() => undefined));
      throw new OutcomeUnknownError('the answer was lost on the way back');
    },
    landed: () => Promise.all(landings),
  };
}
