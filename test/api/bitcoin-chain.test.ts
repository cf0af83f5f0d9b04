import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import pino from 'pino';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { runCliIn } from '../helpers/cli';
import { merchantClient, type MerchantClient } from '../helpers/merchant-client';
import { createPayin, cryptoStatus, testDeposit } from '../helpers/crypto-payins';
import { freePort } from '../../src/dev/postgres';
import { chainNodeById } from '../../src/chain/nodes';
import { handOverDeposits, scanNode, startChainWatcher } from '../../src/chain/watcher';
import { setUpLocalBitcoin, startBtcd } from '../../src/dev/chains/btcd';
import { bitcoinRpc } from '../../src/chain/bitcoin/rpc';
import { bitcoinKeys } from '../../src/chain/bitcoin/keys';
import { parseTransaction } from '../../src/chain/bitcoin/block';
import { faucetAddress } from '../../src/test-deposits/bitcoin-faucet';
import type { LocalNode } from '../../src/dev/chains/anvil';
import {
  chainSends,
  chainTransfers,
  cryptoDeposits,
  depositAddresses,
  ledgerEntries,
  merchants,
} from '../../src/db/schema/index';
import { nodeChains } from '../../activities/connectors/node-chains';
import { expectChainReconciled, sendBreaksOf } from '../helpers/chain-reconciliation';
import { sandboxChain } from '../../activities/connectors/sandbox-chain';

/**
 * BITCOIN on a real node: btcd on regtest (scripts/toolchain.mjs builds it), blocks mined by the test,
 * deposits as real transactions from the regtest faucet, refunds signed by the service.
 */
const CONFIRMATIONS = 3;

let env: TestEnv;
let node: LocalNode;
let dataDir: string;
let chainNodeId: string;
let merchant: MerchantClient;
let watcher: { stop(): Promise<void> };
const log = pino({ level: 'warn' });

beforeAll(async () => {
  const binary = process.env.BTCD_PATH;
  if (!binary) throw new Error('BTCD_PATH must be set: run the tests with `npm test`.');
  env = await startTestEnv();
  dataDir = mkdtempSync(join(tmpdir(), 'payments-btcd-'));
  node = await startBtcd({ binary, port: await freePort(), dataDir });
  const set = await setUpLocalBitcoin(env.database.db, env.config.MASTER_KEY, {
    url: node.url,
    confirmations: CONFIRMATIONS,
    coins: 40,
  });
  chainNodeId = set.chainNodeId;
  watcher = startChainWatcher({
    db: env.database.db,
    temporal: env.client,
    masterKey: env.config.MASTER_KEY,
    log,
    pollMs: 100,
  });
  merchant = merchantClient(env.app, await env.createMerchant());
}, 120_000);
afterAll(async () => {
  await watcher?.stop();
  await node?.stop();
  await env?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const rpc = () => bitcoinRpc(node.url);
const mine = (blocks: number) => rpc().call<string[]>('generate', [blocks]);
/** One scan of everything deep enough now and the hand-over of what it found, run to their end. */
const scan = async () => {
  const watched = (await chainNodeById(env.database.db, env.config.MASTER_KEY, chainNodeId))!;
  await scanNode({ db: env.database.db, temporal: env.client, log }, watched);
  await handOverDeposits({ db: env.database.db, temporal: env.client, log }, watched);
};

const payin = (usd: number, client = merchant) =>
  createPayin(client, { amount: usd, crypto_currency: 'BTC', crypto_network: 'BITCOIN' });
const deposit = (id: string, amount: string, client = merchant) => testDeposit(client, id, amount);
const status = (id: string, client = merchant) => cryptoStatus(client, id);

describe('BITCOIN on btcd regtest, watched block by block', () => {
  it('settles a real transaction as FULLPAID only once it is deep enough, crediting once', async () => {
    // 600 USD at the sandbox rate of 60,000: 0.01 BTC.
    const { transaction_id: id, deposit_address: address, crypto_amount } = await payin(600);
    expect(address).toMatch(/^bcrt1q[02-9ac-hj-np-z]{38}$/);
    expect(crypto_amount).toBe(0.01);

    const sent = await deposit(id, '0.01');
    expect(sent).toMatchObject({ disposition: 'pending', confirmations_required: CONFIRMATIONS });
    const tx = parseTransaction(await rpc().call<string>('getrawtransaction', [sent.tx_hash, 0]));
    expect(tx.outputs.some((o) => o.amount === 1_000_000n)).toBe(true);

    // In the pool, then in a block with one and two confirmations: not counted.
    await scan();
    await mine(CONFIRMATIONS - 1);
    await scan();
    expect(await status(id)).toMatchObject({
      status: 'REDIRECT',
      data: { crypto_payment_status: null, crypto_paid_amount: 0 },
    });

    await mine(1);
    await expect
      .poll(async () => (await status(id)).status, { timeout: 15_000, interval: 100 })
      .toBe('SUCCESS');
    expect((await status(id)).data).toMatchObject({
      crypto_payment_status: 'FULLPAID',
      crypto_paid_amount: 0.01,
    });
    const rows = await env.database.db
      .select()
      .from(cryptoDeposits)
      .where(eq(cryptoDeposits.transactionId, id));
    expect(rows.map((r) => [r.txHash, r.disposition])).toEqual([[sent.tx_hash, 'counted']]);
    // The sender is the address the transaction's input spent: the faucet's.
    const watched = (await chainNodeById(env.database.db, env.config.MASTER_KEY, chainNodeId))!;
    expect(rows[0]!.sender).toBe(faucetAddress(watched));
    const credits = await env.database.db.select().from(ledgerEntries).where(eq(ledgerEntries.reference, id));
    expect(credits.map((e) => [e.step, e.amount])).toEqual([['credit', 60000n]]);
    await expectChainReconciled(env, id);
  });

  it('settles more than asked as OVERPAID and less as UNDERPAID, from real transactions', async () => {
    const over = await payin(600);
    const short = await payin(600);
    await deposit(over.transaction_id, '0.006');
    await deposit(over.transaction_id, '0.0045');
    await deposit(short.transaction_id, '0.004');
    await mine(CONFIRMATIONS);
    await expect
      .poll(() => status(over.transaction_id), { timeout: 15_000, interval: 100 })
      .toMatchObject({
        status: 'SUCCESS',
        data: { crypto_payment_status: 'OVERPAID', crypto_paid_amount: 0.0105 },
      });
    await expect
      .poll(async () => (await status(short.transaction_id)).data, { timeout: 15_000, interval: 100 })
      .toMatchObject({ crypto_payment_status: 'UNDERPAID', crypto_paid_amount: 0.004 });
    expect((await status(short.transaction_id)).status).toBe('REDIRECT');
  });

  it('refunds an excess by merchant setting in a transaction the service signs, spending the deposit', async () => {
    const refunding = await env.createMerchant();
    await env.database.db
      .update(merchants)
      .set({ overpaidPolicy: 'refund' })
      .where(eq(merchants.id, refunding.merchant_id));
    const client = merchantClient(env.app, refunding);
    const { transaction_id: id, deposit_address: address } = await payin(600, client);
    const sent = await deposit(id, '0.012', client);
    await mine(CONFIRMATIONS);
    await expect
      .poll(() => status(id, client), { timeout: 15_000, interval: 100 })
      .toMatchObject({
        status: 'SUCCESS',
        data: { crypto_payment_status: 'OVERPAID', crypto_paid_amount: 0.012 },
      });
    await expect
      .poll(
        async () =>
          (await env.database.db.select().from(cryptoDeposits).where(eq(cryptoDeposits.transactionId, id)))[0]
            ?.refundTxHash,
        { timeout: 15_000, interval: 100 },
      )
      .toMatch(/^[0-9a-f]{64}$/);
    const [row] = await env.database.db
      .select()
      .from(cryptoDeposits)
      .where(eq(cryptoDeposits.transactionId, id));
    expect(row!.refundAmount).toBe('0.002000000000000000');
    // A real transaction in the node: it spends the deposit's output, pays the sender the excess less its
    // fee, and sends the rest back to the deposit address.
    const refund = parseTransaction(await rpc().call<string>('getrawtransaction', [row!.refundTxHash, 0]));
    expect(refund.inputs).toEqual([{ txid: sent.tx_hash, index: expect.any(Number) }]);
    const watched = (await chainNodeById(env.database.db, env.config.MASTER_KEY, chainNodeId))!;
    const paid = refund.outputs.map((o) => [bitcoinKeys(watched).addressOf(o.script), o.amount] as const);
    const toSender = paid.find(([to]) => to === faucetAddress(watched))!;
    expect(toSender[1]).toBeLessThan(200_000n);
    expect(toSender[1]).toBeGreaterThan(199_000n);
    expect(paid.find(([to]) => to === address)?.[1]).toBe(1_000_000n);
    // Reconciled: in the node's pool it has not landed (reported only past half an hour); in a block, once.
    const key = `send:refund:${id}:${sent.tx_hash}`;
    expect(await sendBreaksOf(env, id)).toEqual([]);
    expect(await sendBreaksOf(env, id, 31)).toEqual([`stale_pending ${key}`]);
    await mine(1);
    expect(await rpc().call<unknown>('gettxout', [row!.refundTxHash, 0, true])).not.toBeNull();
    expect(await sendBreaksOf(env, id, 31)).toEqual([]);
  });

  it('sends once per key, retried or concurrent, spends the change an earlier send left, and never takes it for a deposit', async () => {
    const { transaction_id: id, deposit_address: address } = await payin(600);
    await deposit(id, '0.01');
    await mine(CONFIRMATIONS);
    await expect
      .poll(async () => (await status(id)).status, { timeout: 15_000, interval: 100 })
      .toBe('SUCCESS');
    const connector = nodeChains(env.database.db, env.config.MASTER_KEY, sandboxChain());
    const watched = (await chainNodeById(env.database.db, env.config.MASTER_KEY, chainNodeId))!;
    const send = (key: string, amount: string) =>
      connector.send({
        idempotencyKey: key,
        transactionId: id,
        mode: 'test',
        network: 'BITCOIN',
        address: faucetAddress(watched)!,
        amount,
        currency: 'BTC',
      });
    // More than half the deposit: a second signer of the same key would find too little left.
    const [first, concurrent] = await Promise.all([
      send(`refund:${id}:a`, '0.006'),
      send(`refund:${id}:a`, '0.006'),
    ]);
    expect(concurrent).toBe(first);
    expect(await send(`refund:${id}:a`, '0.006')).toBe(first);
    const one = parseTransaction(await rpc().call<string>('getrawtransaction', [first, 0]));
    // The rest of the deposit went back to its address: the next send spends that change, unconfirmed.
    const second = await send(`refund:${id}:b`, '0.003');
    const two = parseTransaction(await rpc().call<string>('getrawtransaction', [second, 0]));
    expect(two.inputs.map((i) => i.txid)).toEqual([first]);
    expect(bitcoinKeys(watched).addressOf(one.outputs[1]!.script)).toBe(address);
    // More than is left is refused, signing nothing.
    await expect(send(`refund:${id}:c`, '0.002')).rejects.toThrow(/hold \d+ satoshis unspent/);
    const rows = await env.database.db.select().from(chainSends).where(eq(chainSends.fromAddress, address));
    expect(rows.map((r) => [r.idempotencyKey, r.attempt, r.state])).toEqual([
      [`refund:${id}:a`, 1, 'broadcast'],
      [`refund:${id}:b`, 1, 'broadcast'],
    ]);
    // Deep enough and read: the change they sent back to the deposit address is no new deposit.
    await mine(CONFIRMATIONS);
    await scan();
    const read = await env.database.db
      .select()
      .from(chainTransfers)
      .where(eq(chainTransfers.transactionId, id));
    expect(read.map((r) => r.txHash)).toEqual([
      (await env.database.db.select().from(cryptoDeposits).where(eq(cryptoDeposits.transactionId, id)))[0]!
        .txHash,
    ]);
  });

  it('gives change below the dust limit to the fee, and records what left the address', async () => {
    const { transaction_id: id } = await payin(600);
    await deposit(id, '0.01');
    await mine(CONFIRMATIONS);
    await expect
      .poll(async () => (await status(id)).status, { timeout: 15_000, interval: 100 })
      .toBe('SUCCESS');
    const connector = nodeChains(env.database.db, env.config.MASTER_KEY, sandboxChain());
    const watched = (await chainNodeById(env.database.db, env.config.MASTER_KEY, chainNodeId))!;
    // 300 satoshis of the deposit's 1,000,000 would be left: below the dust limit (546), no output.
    const sent = await connector.send({
      idempotencyKey: `refund:${id}:dust`,
      transactionId: id,
      mode: 'test',
      network: 'BITCOIN',
      address: faucetAddress(watched)!,
      amount: '0.009997',
      currency: 'BTC',
    });
    const tx = parseTransaction(await rpc().call<string>('getrawtransaction', [sent, 0]));
    expect(tx.outputs).toHaveLength(1);
    const [row] = await env.database.db.select().from(chainSends).where(eq(chainSends.txHash, sent));
    expect(row!.feeUnits).toBe(1_000_000n - tx.outputs[0]!.amount);
    // The fee paid the network's rate on the transaction's size, and the 300 satoshis of dust besides.
    expect(row!.feeUnits! - 300n).toBe(999_700n - tx.outputs[0]!.amount);
  });

  it('never counts a deposit in blocks a reorg replaced before it was deep enough, and counts it once re-mined', async () => {
    const { transaction_id: id } = await payin(600);
    const sent = await deposit(id, '0.01');
    const [first] = await mine(1);
    await mine(CONFIRMATIONS - 2);
    await scan();
    // The blocks holding it are replaced: it is back in the pool, in no block.
    await rpc().call('invalidateblock', [first]);
    const raw = await rpc().call<{ confirmations?: number }>('getrawtransaction', [sent.tx_hash, 1]);
    expect(raw.confirmations ?? 0).toBe(0);
    await scan();
    expect(await status(id)).toMatchObject({ status: 'REDIRECT', data: { crypto_paid_amount: 0 } });
    expect(
      await env.database.db.select().from(cryptoDeposits).where(eq(cryptoDeposits.transactionId, id)),
    ).toEqual([]);
    // Mined again in the new chain: it counts there, once.
    await mine(CONFIRMATIONS);
    await expect
      .poll(async () => (await status(id)).status, { timeout: 15_000, interval: 100 })
      .toBe('SUCCESS');
    const rows = await env.database.db
      .select()
      .from(cryptoDeposits)
      .where(eq(cryptoDeposits.transactionId, id));
    expect(rows.map((r) => r.txHash)).toEqual([sent.tx_hash]);
  });

  it('hands every transaction its own deposit address, never one handed out before', async () => {
    const created = await Promise.all(Array.from({ length: 6 }, () => payin(600)));
    expect(new Set(created.map((c) => c.deposit_address)).size).toBe(6);
    const rows = await env.database.db.select().from(depositAddresses);
    expect(new Set(rows.map((r) => r.address)).size).toBe(rows.length);
    for (const c of created) {
      expect(rows.filter((r) => r.transactionId === c.transaction_id).map((r) => r.address)).toEqual([
        c.deposit_address,
      ]);
    }
  });

  it('is listed by /readyz as watched', async () => {
    await expect
      .poll(async () => (await env.app.inject({ method: 'GET', url: '/readyz' })).json().chains, {
        timeout: 15_000,
        interval: 100,
      })
      .toContainEqual({ mode: 'test', network: 'BITCOIN', watched: true });
  });

  it('registers a node with the CLI, refusing tokens and mainnet in test mode, and never lists its password', async () => {
    const base = ['chains', 'add', '--mode', 'test', '--network', 'BITCOIN', '--rpc-url', node.url];
    const token = await runCliIn(env, ...base, '--token', 'USDT=bc1qxyz');
    expect(token.stderr).toContain('BITCOIN has no tokens here: leave --token out.');
    const live = await runCliIn(
      env,
      'chains',
      'add',
      '--mode',
      'live',
      '--network',
      'BITCOIN',
      '--rpc-url',
      node.url,
    );
    expect(live.stderr).toContain('A live BITCOIN node must serve mainnet');
    const added = await runCliIn(env, ...base, '--confirmations', '6', '--json');
    expect(added.code, added.stderr).toBe(0);
    const registered = JSON.parse(added.stdout) as {
      chain_node_id: string;
      treasury: string | null;
      note: string;
    };
    expect(registered.treasury).toBeNull();
    expect(registered.note).toContain('spends the deposit');
    const listed = await runCliIn(env, 'chains', 'list', '--json');
    const password = new URL(node.url).password;
    expect(listed.stdout).not.toContain(password);
    expect(JSON.parse(listed.stdout) as Record<string, unknown>[]).toContainEqual(
      expect.objectContaining({
        chain_node_id: registered.chain_node_id,
        network: 'BITCOIN',
        confirmations: 6,
      }),
    );
  });
});
