import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { cardRequest, merchantClient } from '../helpers/merchant-client';
import { startWebhookReceiver } from '../helpers/webhook-receiver';
import { runCliIn } from '../helpers/cli';
import { and, eq } from 'drizzle-orm';
import { auditLog, opsActions } from '../../src/db/schema/index';

let env: TestEnv;

beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(() => env?.close());

const cli = (...argv: string[]) => runCliIn(env, ...argv);

describe('npx payments', () => {
  it('shows and changes crypto settlement settings, audited', async () => {
    const merchant = await env.createMerchant();
    const id = merchant.merchant_id;
    const shown = await cli('merchants', 'settings', '--merchant', id, '--json');
    expect(JSON.parse(shown.stdout)).toEqual({
      tolerances: {},
      tolerance_fiat: null,
      underpaid: 'fail',
      overpaid: 'keep',
    });
    const changed = await cli(
      'merchants',
      'settings',
      '--merchant',
      id,
      '--tolerance',
      'usdt:0.50',
      '--tolerance',
      'BTC:0.00001',
      '--tolerance-fiat',
      '0.25',
      '--underpaid',
      'accept',
      '--json',
    );
    expect(changed.code).toBe(0);
    expect(JSON.parse(changed.stdout)).toEqual({
      tolerances: { BTC: '0.00001', USDT: '0.5' },
      tolerance_fiat: '0.25',
      underpaid: 'accept',
      overpaid: 'keep',
    });
    const cleared = await cli('merchants', 'settings', '--merchant', id, '--tolerance', 'none', '--json');
    expect(JSON.parse(cleared.stdout).tolerances).toEqual({});
    const audit = await env.database.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.merchantId, id), eq(auditLog.action, 'merchant.settlement_settings_changed')));
    expect(audit).toHaveLength(2);
    const bad = await cli('merchants', 'settings', '--merchant', id, '--tolerance', 'USDT:-1');
    expect(bad).toMatchObject({ code: 1, stderr: expect.stringContaining('non-negative decimal') });
    const unknown = await cli('merchants', 'settings', '--merchant', 'mer_nope', '--underpaid', 'accept');
    expect(unknown).toMatchObject({ code: 1, stderr: 'error: Merchant mer_nope not found.\n' });
  });

  it('creates a merchant whose keys work, with a test wallet of the given balance and an empty live one', async () => {
    const result = await cli(
      'merchants',
      'create',
      '--name',
      'CLI shop',
      '--wallet',
      'USD:2500',
      '--wallet',
      'GBP:10',
      '--json',
    );
    expect(result.code).toBe(0);
    const created = JSON.parse(result.stdout);
    expect(Object.keys(created)).toEqual(
      expect.arrayContaining([
        'merchant_id',
        'test_secret_key',
        'live_secret_key',
        'encryption_key',
        'webhook_secret',
        'wallets',
      ]),
    );
    expect(created.test_secret_key).toMatch(/^PA_TEST_[0-9A-Za-z]{32,}$/);
    expect(created.live_secret_key).toMatch(/^PA_LIVE_[0-9A-Za-z]{32,}$/);
    expect(created.encryption_key).toHaveLength(32);
    expect(created.wallets).toHaveLength(4);
    const wallets = await merchantClient(env.app, created).get('/api/v1/wallet');
    expect(
      wallets.json().data.map((w: { currency: string; amount: number }) => [w.currency, w.amount]),
    ).toEqual([
      ['GBP', 10],
      ['USD', 2500],
    ]);
    // A wallet of each currency in each mode, with the opening balance given (the contract, section 1).
    const client = merchantClient(env.app, created);
    const live = await client.get('/api/v1/wallet', { key: client.key('live') });
    expect(live.json().data.map((w: { currency: string; amount: number }) => [w.currency, w.amount])).toEqual(
      [
        ['GBP', 10],
        ['USD', 2500],
      ],
    );
  });

  it('credits a wallet through the ledger and prints a statement that adds up', async () => {
    const created = JSON.parse(
      (await cli('merchants', 'create', '--name', 'Ledger shop', '--wallet', 'EUR:100', '--json')).stdout,
    );
    const wallet = created.wallets[0].wallet_id;
    expect(
      (await cli('wallets', 'credit', '--wallet', wallet, '--amount', '50', '--reference', 'topup-1')).code,
    ).toBe(0);
    expect(
      JSON.parse(
        (
          await cli(
            'wallets',
            'credit',
            '--wallet',
            wallet,
            '--amount',
            '50',
            '--reference',
            'topup-1',
            '--json',
          )
        ).stdout,
      ).result,
    ).toBe('duplicate');
    const statement = JSON.parse((await cli('wallets', 'statement', wallet, '--json')).stdout);
    expect(statement.entries.map((e: { step: string; amount: string }) => [e.step, e.amount])).toEqual([
      ['credit', '100'],
      ['credit', '50'],
    ]);
    expect(statement).toMatchObject({ ledger_total: '150', available: '150' });
  });

  it('rotates keys and adds terminals', async () => {
    const created = JSON.parse((await cli('merchants', 'create', '--name', 'Rotating', '--json')).stdout);
    const rotated = await cli('merchants', 'rotate-keys', '--merchant', created.merchant_id, '--json');
    expect(rotated.code).toBe(0);
    const keys = JSON.parse(rotated.stdout);
    expect(keys.test_secret_key).not.toBe(created.test_secret_key);
    expect(keys.webhook_secret).toBe(keys.encryption_key);
    const own = JSON.parse(
      (await cli('merchants', 'rotate-webhook-secret', '--merchant', created.merchant_id, '--json')).stdout,
    );
    expect(own.webhook_secret).not.toBe(keys.encryption_key);
    const again = JSON.parse(
      (await cli('merchants', 'rotate-keys', '--merchant', created.merchant_id, '--json')).stdout,
    );
    expect(again.webhook_secret).toBe(own.webhook_secret);
    expect((await cli('merchants', 'rotate-webhook-secret', '--merchant', 'mer_none')).stderr).toBe(
      'error: Merchant mer_none not found.\n',
    );
    const terminal = await cli(
      'terminals',
      'add',
      '--merchant',
      created.merchant_id,
      '--mode',
      'test',
      '--kind',
      'card',
      '--json',
    );
    expect(JSON.parse(terminal.stdout).terminal_id).toMatch(/^ter_/);
    // Live mode takes no sandbox terminal here (test/api/live-sandbox.test.ts has the rest).
    expect(created.terminals.every((t: { mode: string }) => t.mode === 'test')).toBe(true);
  });

  it("redelivers a transaction's webhook with the same event id", async () => {
    const receiver = await startWebhookReceiver();
    try {
      const merchant = merchantClient(env.app, await env.createMerchant());
      const created = await merchant.post('/api/v1/test/card', cardRequest({ webhook_url: receiver.url }));
      const [first] = await receiver.waitFor(1);
      const id = created.json().data.transaction_id as string;
      const result = await cli('webhooks', 'redeliver', id, '--json', '--actor', 'dana');
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout).redelivering).toEqual([{ event_id: first!.json.event_id, run: 1 }]);
      const [, second] = await receiver.waitFor(2);
      expect(second!.body).toBe(first!.body);
      const trail = await env.database.db.select().from(opsActions).where(eq(opsActions.transactionId, id));
      expect(trail).toMatchObject([
        { action: 'redeliverWebhooks', actor: 'dana', statusBefore: 'SUCCESS', statusAfter: 'SUCCESS' },
      ]);
    } finally {
      await receiver.close();
    }
  });

  it.each([
    [['merchants', 'create'], '--name is required'],
    [['merchants', 'create', '--name', 'x', '--wallet', 'DOLLARS'], '--wallet must be CUR:AMOUNT'],
    [['merchants', 'rotate-keys', '--merchant', 'mer_missing'], 'Merchant mer_missing not found.'],
    [['wallets', 'credit', '--wallet', 'wal_missing', '--amount', '5'], 'Wallet wal_missing not found.'],
    [
      ['wallets', 'credit', '--wallet', 'wal_x', '--amount', '1.5'],
      '--amount must be a positive whole number',
    ],
    [
      ['terminals', 'add', '--merchant', 'm', '--mode', 'prod', '--kind', 'card'],
      '--mode must be test or live',
    ],
    [['webhooks', 'redeliver', 'PAnothing'], 'No webhook event found for PAnothing.'],
    [['merchants', 'create', '--bogus'], "Unknown option '--bogus'"],
  ])('fails %j with one clear line and a non-zero exit', async (argv, message) => {
    const result = await cli(...argv);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(message);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });
});
