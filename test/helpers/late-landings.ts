import { expect } from 'vitest';
import { OutcomeUnknownError } from '../../activities/connectors/errors';
import { SEND_LANDS_WITHIN_MS } from '../../src/contracts';
import type { MerchantCredentials } from '../../src/merchants/accounts';
import type { MerchantClient } from './merchant-client';

/**
 * Requests whose answer is lost while they are still on their way to the provider, where they land later
 * (payout-late-send.test.ts, card-late-send.test.ts). Only requests through the merchant's first terminal
 * of a kind (`useFirstTerminal`), of an amount set to land late (`landAfter`), are: `intercept` makes such a
 * request's own call that much later and throws the lost answer now. `landed` waits for every landing,
 * before the provider's books are read and before the environment closes.
 */
export function lateLandings() {
  const landsAfter = new Map<bigint, number>();
  const landings: Promise<unknown>[] = [];
  /** Per amount, how many requests were intercepted: a test shows its request did land late. */
  const lost = new Map<bigint, number>();
  let firstTerminal: string | undefined;
  return {
    useFirstTerminal(credentials: MerchantCredentials, kind: 'card' | 'payout'): void {
      const [first] = credentials.terminals
        .filter((t) => t.mode === 'test' && t.kinds.includes(kind))
        .sort((a, b) => a.priority - b.priority);
      firstTerminal = first!.terminal_id;
    },
    get firstTerminal(): string {
      return firstTerminal!;
    },
    landAfter(amountMinor: bigint, delayMs: number): void {
      landsAfter.set(amountMinor, delayMs);
    },
    intercept(request: { amountMinor: bigint; idempotencyKey: string }, land: () => Promise<unknown>): void {
      const delay = landsAfter.get(request.amountMinor);
      if (delay === undefined || !firstTerminal || !request.idempotencyKey.endsWith(firstTerminal)) return;
      lost.set(request.amountMinor, (lost.get(request.amountMinor) ?? 0) + 1);
      landings.push(new Promise((resolve) => setTimeout(resolve, delay)).then(land).catch(() => undefined));
      throw new OutcomeUnknownError('the answer was lost on the way back');
    },
    lost: (amountMinor: bigint) => lost.get(amountMinor) ?? 0,
    landed: () => Promise.all(landings),
  };
}

/** Waits until the transaction shows SUCCESS, for as long as a lost request may take to be trusted gone. */
export async function untilSucceeded(merchant: MerchantClient, transactionId: string): Promise<void> {
  const status = async () =>
    ((await merchant.get(`/api/test/status/${transactionId}`)).json() as { status: string }).status;
  await expect.poll(status, { timeout: SEND_LANDS_WITHIN_MS + 30_000 }).toBe('SUCCESS');
}
