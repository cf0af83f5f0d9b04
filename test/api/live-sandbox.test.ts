import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq, sql } from 'drizzle-orm';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { runCliIn } from '../helpers/cli';
import { cardRequest, merchantClient, payinRequest, rampRequest } from '../helpers/merchant-client';
import { chainNodes, depositAddresses } from '../../src/db/schema/index';
import { fromTronAddress } from '../../src/chain/tron/address';
import { encryptSecret } from '../../src/ciphers/secrets';
import { EvmKeys } from '../../src/chain/evm/keys';
import { createMerchant } from '../../src/merchants/accounts';
import { SANDBOX_TERMINALS } from '../../src/schemas/sandbox-cards';
import { start } from '../../src/process/main';
import { ConfigError } from '../../src/platform/config';

// A production configuration: live mode may not use the sandbox connectors.
let env: TestEnv;
beforeAll(async () => {
  // URL checks are not the subject here (this machine has no DNS for the sample merchant URLs).
  env = await startTestEnv({ ALLOW_SANDBOX_IN_LIVE: 'false', ALLOW_PRIVATE_URLS: 'true' });
});
afterAll(() => env?.close());

const withLiveSandbox = () =>
  createMerchant(env.database.db, env.config.MASTER_KEY, {
    name: 'Live on the sandbox',
    wallets: [{ currency: 'USD', amount: 1_000n }],
    terminals: SANDBOX_TERMINALS,
    liveSandbox: true,
  });

describe('live mode and the sandbox connectors', () => {
  it('a new merchant gets sandbox terminals in test mode only', async () => {
    const merchant = await createMerchant(env.database.db, env.config.MASTER_KEY, {
      name: 'Production merchant',
      wallets: [],
      terminals: SANDBOX_TERMINALS,
    });
    expect(merchant.terminals.filter((t) => t.mode === 'live')).toEqual([]);
    expect(merchant.terminals.filter((t) => t.mode === 'test')).toHaveLength(SANDBOX_TERMINALS.length);
  });

  it('a live payment is never routed to a sandbox connector', async () => {
    const merchant = merchantClient(env.app, await withLiveSandbox());
    const response = await merchant.post(
      '/api/v1/live/card',
      cardRequest({ card_number: '4111111111111111' }),
    );
    expect(response.json()).toMatchObject({
      status: 'FAILED',
      message: 'No terminal is available for this transaction.',
    });
    const charged = await env.database.db.execute(
      sql`select count(*)::int as n from sandbox_operations where idempotency_key like ${`%${response.json().data.transaction_id}%`}`,
    );
    expect((charged.rows[0] as { n: number }).n).toBe(0);
  });

  it('the service refuses to start while a live terminal uses a sandbox connector, naming it', async () => {
    const merchant = await withLiveSandbox();
    const live = merchant.terminals.filter((t) => t.mode === 'live').map((t) => t.terminal_id);
    const starting = start({ ...env.config, ROLE: 'api', PORT: 0 });
    await expect(starting).rejects.toBeInstanceOf(ConfigError);
    const message = await starting.catch((error: Error) => error.message);
    for (const id of live) expect(message).toContain(id);
    expect(message).toContain('ALLOW_SANDBOX_IN_LIVE');
  });

  it('the CLI refuses a live terminal on a sandbox connector', async () => {
    const merchant = await createMerchant(env.database.db, env.config.MASTER_KEY, {
      name: 'CLI merchant',
      wallets: [],
      terminals: [],
    });
    const refused = await runCliIn(
      env,
      'terminals',
      'add',
      '--merchant',
      merchant.merchant_id,
      '--mode',
      'live',
      '--kind',
      'card',
      '--connector',
      'sandbox-acquirer',
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('sandbox-acquirer is a sandbox connector');
    const allowed = await runCliIn(
      env,
      'terminals',
      'add',
      '--merchant',
      merchant.merchant_id,
      '--mode',
      'test',
      '--kind',
      'card',
    );
    expect(allowed.code, allowed.stderr).toBe(0);
  });

  it('live crypto runs only on a network a node watches: elsewhere the sandbox chain is refused', async () => {
    const merchant = merchantClient(
      env.app,
      await createMerchant(env.database.db, env.config.MASTER_KEY, {
        name: 'Live crypto',
        wallets: [{ currency: 'USD', amount: 0n }],
        terminals: [],
      }),
    );
    const tron = await merchant.post('/api/v1/live/crypto/payin', payinRequest({ crypto_network: 'TRON' }));
    expect(tron.statusCode).toBe(422);
    expect(tron.json().message).toBe(
      'Crypto payins on TRON are not available in live mode: no node watches it.',
    );
    const ramp = await merchant.post('/api/v1/live/crypto', rampRequest());
    expect(ramp.statusCode).toBe(422);
    expect(ramp.json().message).toBe(
      'Ramps are not available in live mode: their fiat side has no live connector.',
    );

    // A live node for ETHEREUM (an address needs only its seed, not the node): payins there are taken.
    await env.database.db.insert(chainNodes).values({
      id: 'chain_live_eth',
      mode: 'live',
      network: 'ETHEREUM',
      rpcUrl: 'http://127.0.0.1:9',
      confirmations: 12,
      tokens: { USDT: '0xdac17f958d2ee523a2206206994597c13d831ec7' },
      seedEnc: encryptSecret('00'.repeat(32), env.config.MASTER_KEY),
    });
    const eth = await merchant.post(
      '/api/v1/live/crypto/payin',
      payinRequest({ crypto_network: 'ETHEREUM' }),
    );
    expect(eth.statusCode, eth.payload).toBe(200);
    expect(eth.json()).toMatchObject({ status: 'REDIRECT' });
    expect(eth.json().data.deposit_address).toBe(new EvmKeys('00'.repeat(32)).depositAddress(0));
  });

  it('takes live TRON token payins on a watched node at T-addresses, and refuses TRX there', async () => {
    const merchant = merchantClient(
      env.app,
      await createMerchant(env.database.db, env.config.MASTER_KEY, {
        name: 'Live TRON',
        wallets: [{ currency: 'USD', amount: 0n }],
        terminals: [],
      }),
    );
    await env.database.db.insert(chainNodes).values({
      id: 'chain_live_tron',
      mode: 'live',
      network: 'TRON',
      rpcUrl: 'https://tron.invalid/jsonrpc',
      confirmations: 19,
      tokens: { USDT: '0xa614f803b6fd780986a42c78ec9c7f77e6ded13c' },
      seedEnc: encryptSecret('01'.repeat(32), env.config.MASTER_KEY),
    });
    const trx = await merchant.post(
      '/api/v1/live/crypto/payin',
      payinRequest({ crypto_network: 'TRON', crypto_currency: 'TRX' }),
    );
    expect(trx.statusCode).toBe(422);
    expect(trx.json().message).toBe(
      'TRX payins on TRON are not available in live mode: its node watches tokens only.',
    );
    const usdt = await merchant.post(
      '/api/v1/live/crypto/payin',
      payinRequest({ crypto_network: 'TRON', crypto_currency: 'USDT' }),
    );
    expect(usdt.statusCode, usdt.payload).toBe(200);
    const shown = usdt.json().data.deposit_address as string;
    expect(shown).toMatch(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
    const [row] = await env.database.db
      .select()
      .from(depositAddresses)
      .where(eq(depositAddresses.transactionId, usdt.json().data.transaction_id as string));
    expect(row!.address).toBe(fromTronAddress(shown));
    expect(row!.address).toBe(new EvmKeys('01'.repeat(32), 195).depositAddress(row!.hdIndex));
  });

  it('offers in live mode only what a live node watches: never OMNI, TRON for its tokens only', async () => {
    const merchant = merchantClient(
      env.app,
      await createMerchant(env.database.db, env.config.MASTER_KEY, {
        name: 'Live list',
        wallets: [{ currency: 'USD', amount: 0n }],
        terminals: [],
      }),
    );
    const codes = async () =>
      (
        (await merchant.postPlain('/api/v1/live/crypto/currencies', { country: 'GB', amount: 1000 })).json()
          .data as {
          code: string;
          networks: string[];
        }[]
      ).map((c) => `${c.code}:${c.networks.join(',')}`);
    // Earlier tests registered live nodes: without any, nothing is offered.
    await env.database.db.update(chainNodes).set({ active: false }).where(eq(chainNodes.mode, 'live'));
    expect(await codes()).toEqual([]);
    for (const [id, network, tokens] of [
      ['chain_list_eth', 'ETHEREUM', { USDT: '0xdac17f958d2ee523a2206206994597c13d831ec7' }],
      ['chain_list_tron', 'TRON', { USDT: '0xa614f803b6fd780986a42c78ec9c7f77e6ded13c' }],
    ] as const) {
      await env.database.db.insert(chainNodes).values({
        id,
        mode: 'live',
        network,
        rpcUrl: `https://${network.toLowerCase()}.invalid`,
        confirmations: 12,
        tokens,
        seedEnc: encryptSecret('00'.repeat(32), env.config.MASTER_KEY),
      });
    }
    expect(await codes()).toEqual(['ETH:ETHEREUM', 'USDT:ETHEREUM,TRON']);
    // Test mode still lists the whole catalogue, OMNI included where the country allows it.
    const test = (
      await merchant.postPlain('/api/v1/test/crypto/currencies', { country: 'GB', amount: 1000 })
    ).json().data as {
      code: string;
      networks: string[];
    }[];
    expect(test.find((c) => c.code === 'USDT')!.networks).toContain('OMNI');
    expect(test.map((c) => c.code)).toContain('TRX');
  });

  it('refuses OMNI in live mode by name', async () => {
    const merchant = merchantClient(
      env.app,
      await createMerchant(env.database.db, env.config.MASTER_KEY, {
        name: 'Live OMNI',
        wallets: [{ currency: 'USD', amount: 0n }],
        terminals: [],
      }),
    );
    const response = await merchant.post(
      '/api/v1/live/crypto/payin',
      payinRequest({ crypto_currency: 'USDT', crypto_network: 'OMNI', country: 'GB', amount: 1000 }),
    );
    expect(response.statusCode).toBe(422);
    expect(response.json().message).toBe('Network OMNI is not available.');
  });
});
