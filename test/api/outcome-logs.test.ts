/**
 * What a worker logs of an outcome (docs/operations.md#logs): a decline is an answer, not a fault, so it
 * is told at info like a success, with no failed-activity warning and no card data.
 */
import { describe, expect, it } from 'vitest';
import { cleanUpAfterAll, until } from '../faults/harness';
import { startServiceProcess } from '../helpers/service-process';
import { cardRequest, encryptForMerchant } from '../helpers/merchant-client';

const cleanups = cleanUpAfterAll();

interface LogLine {
  level: number;
  msg: string;
  transactionId?: string;
}

describe('outcome logs', () => {
  it('tells a decline and a success at info, and warns of neither', async () => {
    const { baseUrl, merchant, service } = await startServiceProcess(
      'logged',
      { LOG_LEVEL: 'info' },
      cleanups,
    );

    const pay = async (card: string) => {
      const response = await fetch(`${baseUrl}/api/v1/test/card`, {
        method: 'POST',
        headers: { authorization: `Bearer ${merchant.test_secret_key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          payload: encryptForMerchant(cardRequest({ card_number: card }), merchant.encryption_key),
        }),
      });
      return (await response.json()) as { status: string; data: { transaction_id: string } };
    };
    const declined = await pay('4000000000000002');
    const paid = await pay('4242424242424242');
    expect([declined.status, paid.status]).toEqual(['FAILED', 'SUCCESS']);

    const lines = (): LogLine[] =>
      service.log
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as LogLine);
    const about = (id: string) => lines().filter((line) => line.transactionId === id);
    await until(
      'both outcomes to be logged',
      async () =>
        about(declined.data.transaction_id).length > 0 && about(paid.data.transaction_id).length > 0,
      30_000,
    );
    expect(about(declined.data.transaction_id)).toEqual([
      expect.objectContaining({ level: 30, msg: 'transaction FAILED: Card declined.' }),
    ]);
    expect(about(paid.data.transaction_id)).toEqual([
      expect.objectContaining({ level: 30, msg: expect.stringMatching(/^transaction SUCCESS: /) }),
    ]);
    expect(lines().filter((line) => line.level >= 40)).toEqual([]);
    expect(service.log).not.toContain('4000000000000002');
  }, 240_000);
});
