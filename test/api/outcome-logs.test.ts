/**
 * What a worker logs of an outcome (docs/operations.md#logs): a decline is an answer, not a fault, so it
 * is told at info like a success, with no failed-activity warning and no card data.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { createDatabase } from '../../src/db/client';
import { createMerchant } from '../../src/merchants/accounts';
import { SANDBOX_TERMINALS } from '../../src/sandbox/tables';
import {
  cleanUpAfterAll,
  freePorts,
  SERVICE_COMMAND,
  ServiceProcess,
  until,
  waitReady,
} from '../faults/harness';
import { createTestDatabase } from '../helpers/env';
import { cardRequest, encryptForMerchant } from '../helpers/merchant-client';

const cleanups = cleanUpAfterAll();

interface LogLine {
  level: number;
  msg: string;
  transactionId?: string;
}

describe('outcome logs', () => {
  it('tells a decline and a success at info, and warns of neither', async () => {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    const masterKey = randomBytes(32).toString('hex');
    const setup = createDatabase(database.url, 1);
    const merchant = await createMerchant(setup.db, masterKey, {
      name: 'Logged merchant',
      wallets: [{ currency: 'USD', amount: 0n }],
      terminals: SANDBOX_TERMINALS,
    });
    await setup.close();

    const [port, metricsPort] = await freePorts(2);
    const baseUrl = `http://127.0.0.1:${port}`;
    const service = new ServiceProcess('logged service', SERVICE_COMMAND, {
      ...process.env,
      ROLE: 'all',
      LOG_LEVEL: 'info',
      DATABASE_URL: database.url,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_TASK_QUEUE: `logged-${randomBytes(4).toString('hex')}`,
      MASTER_KEY: masterKey,
      PAYLOAD_KEYS: `logged:${randomBytes(32).toString('hex')}`,
      HOST: '127.0.0.1',
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
      BASE_URL: baseUrl,
      SHUTDOWN_DRAIN_SECONDS: '0',
    });
    cleanups.push(() => service.stop());
    service.start();
    await waitReady(baseUrl, service);

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
