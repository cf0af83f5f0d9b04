import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq, sql } from 'drizzle-orm';
import pino from 'pino';
import { address, lamports } from '@solana/kit';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { runCliIn } from '../helpers/cli';
import { merchantClient, payinRequest, type MerchantClient } from '../helpers/merchant-client';
import { createPayin, cryptoStatus, testDeposit } from '../helpers/crypto-payins';
import { LocalSolanaNode, fundTreasury, mintTestToken, randomSigner } from '../../src/dev/chains/litesvm';
import { sendOnSolana, signSolanaSend } from '../../src/chain/solana/send';
import { chainNodeById, ChainNodeError, retireChainNodesAt } from '../../src/chain/nodes';
import { addChainNode } from '../../src/chain/registration';
import { handOverDeposits, scanNode, startChainWatcher } from '../../src/chain/watcher';
import { readerOf } from '../../src/chain/families';
import { tokenPayment } from '../../src/chain/solana/instructions';
import { SolanaKeys } from '../../src/chain/solana/keys';
import { chainBreaksOf, expectChainReconciled, sendBreaksOf } from '../helpers/chain-reconciliation';
import {
  chainNodes,
  chainSends,
  chainTransfers,
  cryptoDeposits,
  depositAddresses,
  ledgerEntries,
  merchants,
  transactions,
} from '../../src/db/schema/index';

/**
 * SOLANA on its real runtime: LiteSVM with the SPL token and associated token programs, behind the
 * JSON-RPC calls the watcher makes in production (src/dev/chains/litesvm.ts). USDT is an SPL mint at
 * the catalogue's 6 decimals; deposits are token transfers into the deposit owner's associated token
 * account, from the node's test faucet or from a customer's own wallet.
 */
const CONFIRMATIONS = 3;
const BASE58_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

let env: TestEnv;
let node: LocalSolanaNode;
let mint: string;
let chainNodeId: string;
let seedHex: string;
let merchant: MerchantClient;
let watcher: { stop(): Promise<void> };
let customer: Awaited<ReturnType<typeof randomSigner>>['signer'];
let faucetOwner: string;
let treasuryAddress: string;
const log = pino({ level: 'warn' });

beforeAll(async () => {
  // Live mode offers only what a live node watches.
  env = await startTestEnv({ ALLOW_PRIVATE_URLS: 'true', ALLOW_SANDBOX_IN_LIVE: 'false' });
  node = new LocalSolanaNode();
  await node.listen();
  const faucet = await randomSigner();
  mint = await mintTestToken(node, faucet.signer, 6, 1_000_000_000_000n);
  // A customer's own wallet, funded from the faucet by a plain token transfer.
  customer = (await randomSigner()).signer;
  node.svm.airdrop(customer.address, lamports(10_000_000_000n));
  await node.send(
    faucet.signer,
    await tokenPayment(
      faucet.signer,
      faucet.signer,
      faucet.signer.address,
      customer.address,
      mint,
      1_000_000_000n,
      6,
    ),
  );
  seedHex = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex');
  let treasury: string | null;
  ({ id: chainNodeId, treasury } = await addChainNode(env.database.db, env.config.MASTER_KEY, {
    mode: 'test',
    network: 'SOLANA',
    rpcUrl: node.url,
    confirmations: CONFIRMATIONS,
    tokens: { USDT: mint },
    seedHex,
    faucetKey: Buffer.from(faucet.secret).toString('hex'),
  }));
  faucetOwner = faucet.signer.address;
  treasuryAddress = treasury!;
  await fundTreasury(node, faucet.signer, mint, treasuryAddress, 1_000_000_000n, 6);
  watcher = startWatcher();
  merchant = merchantClient(env.app, await env.createMerchant());
}, 60_000);
afterAll(async () => {
  await watcher?.stop();
  await node?.close();
  await env?.close();
});

/** The chain watcher of the test environment's workflows, polling every node each 100 ms. */
const startWatcher = () =>
  startChainWatcher({
    db: env.database.db,
    temporal: env.client,
    masterKey: env.config.MASTER_KEY,
    log,
    pollMs: 100,
  });

/**
 * One scan of everything deep enough now and the hand-over of what it found, run to their end; with
 * `closed: false`, as the watcher's scans between its reads of closed transactions' addresses.
 */
const scan = async ({ closed = true } = {}) => {
  const watched = (await chainNodeById(env.database.db, env.config.MASTER_KEY, chainNodeId))!;
  await scanNode({ db: env.database.db, temporal: env.client, log }, watched, { closed });
  await handOverDeposits({ db: env.database.db, temporal: env.client, log }, watched);
};
const payin = (usd: number, client = merchant) =>
  createPayin(client, { amount: usd, crypto_currency: 'USDT', crypto_network: 'SOLANA', country: 'GB' });
const deposit = (id: string, amount: string, client = merchant) => testDeposit(client, id, amount);
const status = (id: string, client = merchant) => cryptoStatus(client, id);

/** A customer's own transfer of `units` into `owner`'s associated token account, opening it if need be. */
const customerTransfer = async (owner: string, units: bigint) =>
  node.sign(customer, await tokenPayment(customer, customer, customer.address, owner, mint, units, 6));

describe('SOLANA on LiteSVM, USDT as an SPL token', () => {
  it('settles a real token transfer as FULLPAID only once it is deep enough, crediting once', async () => {
    const { transaction_id: id, deposit_address: owner } = await payin(10);
    expect(owner).toMatch(BASE58_ADDRESS);
    const [row] = await env.database.db
      .select()
      .from(depositAddresses)
      .where(eq(depositAddresses.transactionId, id));
    // The owner derived from the node's seed at the index handed out, stored as shown (base58 is case-sensitive).
    expect(row!.address).toBe(owner);
    expect(new SolanaKeys(seedHex).depositAddress(row!.hdIndex)).toBe(owner);

    const sent = await deposit(id, '10');
    expect(sent).toMatchObject({ disposition: 'pending', confirmations_required: CONFIRMATIONS });
    expect(sent.tx_hash).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    // The token program moved it into the owner's associated token account, opened by the transfer.
    expect(await node.tokenBalance(owner, mint)).toBe(10_000_000n);

    // In a block with one, then two confirmations: not counted, not even read.
    await scan();
    node.mine(CONFIRMATIONS - 2);
    await scan();
    expect(
      await env.database.db.select().from(chainTransfers).where(eq(chainTransfers.transactionId, id)),
    ).toEqual([]);
    expect(await status(id)).toMatchObject({
      status: 'REDIRECT',
      data: { crypto_payment_status: null, crypto_paid_amount: 0 },
    });

    node.mine(1);
    await expect
      .poll(async () => (await status(id)).status, { timeout: 15_000, interval: 100 })
      .toBe('SUCCESS');
    expect((await status(id)).data).toMatchObject({
      crypto_payment_status: 'FULLPAID',
      crypto_paid_amount: 10,
    });
    const rows = await env.database.db
      .select()
      .from(cryptoDeposits)
      .where(eq(cryptoDeposits.transactionId, id));
    expect(rows.map((r) => [r.txHash, r.disposition])).toEqual([[sent.tx_hash, 'counted']]);
    const credits = await env.database.db.select().from(ledgerEntries).where(eq(ledgerEntries.reference, id));
    expect(credits.map((e) => [e.step, e.amount])).toEqual([['credit', 1000n]]);
    await expectChainReconciled(env, id);
  });

  it('settles more than asked as OVERPAID and less as UNDERPAID, from real transfers', async () => {
    const over = await payin(10);
    const short = await payin(10);
    await deposit(over.transaction_id, '6');
    await deposit(over.transaction_id, '6.5');
    await deposit(short.transaction_id, '4');
    node.mine(CONFIRMATIONS - 1);
    await expect
      .poll(() => status(over.transaction_id), { timeout: 15_000, interval: 100 })
      .toMatchObject({
        status: 'SUCCESS',
        data: { crypto_payment_status: 'OVERPAID', crypto_paid_amount: 12.5 },
      });
    await expect
      .poll(async () => (await status(short.transaction_id)).data, { timeout: 15_000, interval: 100 })
      .toMatchObject({ crypto_payment_status: 'UNDERPAID', crypto_paid_amount: 4 });
    expect((await status(short.transaction_id)).status).toBe('REDIRECT');
  });

  it("counts a customer's own wallet transfer with its sender, across a skipped slot, and never a failed one", async () => {
    const { transaction_id: id, deposit_address: owner } = await payin(10);
    node.skip();
    // A transfer of more than the customer holds lands (as one sent without preflight does) and fails:
    // it moves nothing, and counts nothing.
    const failed = node.submit(await customerTransfer(owner, 10n ** 15n));
    expect(failed.err).not.toBeNull();
    const paid = node.submit(await customerTransfer(owner, 10_000_000n));
    expect(paid.err).toBeNull();
    node.skip();
    node.mine(CONFIRMATIONS);
    await expect
      .poll(async () => (await status(id)).status, { timeout: 15_000, interval: 100 })
      .toBe('SUCCESS');
    const [read] = await env.database.db
      .select()
      .from(chainTransfers)
      .where(eq(chainTransfers.txHash, paid.signature));
    expect(read).toMatchObject({
      transactionId: id,
      amount: '10.000000000000000000',
      sender: customer.address,
    });
    const transfers = await env.database.db
      .select()
      .from(chainTransfers)
      .where(eq(chainTransfers.transactionId, id));
    expect(transfers.map((t) => t.txHash)).toEqual([paid.signature]);
  });

  it('hands every transaction its own deposit address, never one handed out before', async () => {
    const created = await Promise.all(Array.from({ length: 6 }, () => payin(10)));
    expect(new Set(created.map((c) => c.deposit_address)).size).toBe(6);
    const rows = await env.database.db.select().from(depositAddresses);
    expect(new Set(rows.map((r) => r.address)).size).toBe(rows.length);
    expect(new Set(rows.map((r) => r.hdIndex)).size).toBe(rows.length);
    for (const c of created) {
      expect(rows.filter((r) => r.transactionId === c.transaction_id).map((r) => r.address)).toEqual([
        c.deposit_address,
      ]);
    }
  });
});

describe('SOLANA reads that grow with what moved, not with every address handed out', () => {
  it('reads idle deposit accounts by one balance call per hundred, and signatures only where one moved or the service sent from it', async () => {
    // The background watcher would read too: its calls would be counted with the reader's.
    await watcher.stop();
    try {
      const reader = readerOf(
        (await chainNodeById(env.database.db, env.config.MASTER_KEY, chainNodeId))!,
        env.database.db,
      );
      const { transaction_id: id, deposit_address: owner } = await payin(10);
      const { deposit_address: other } = await payin(10);
      const accounts = (await env.database.db.select().from(depositAddresses)).filter(
        (row) => row.chainNodeId === chainNodeId,
      ).length;
      const calls = (method: string) => node.calls.get(method) ?? 0;
      let cursor = await reader.head();
      /**
       * Mines `blocks`, then reads as the watcher does: the slots since the last read, up to those deep
       * enough (the bank the balances come from is CONFIRMATIONS - 1 slots past them). Counts the calls.
       */
      const read = async (blocks = CONFIRMATIONS) => {
        node.mine(blocks);
        const to = (await reader.head()) - BigInt(CONFIRMATIONS - 1);
        const [signatures, balances] = [calls('getSignaturesForAddress'), calls('getMultipleAccounts')];
        const seen = await reader.transfers(cursor + 1n, to);
        cursor = to;
        return {
          seen,
          signatureCalls: calls('getSignaturesForAddress') - signatures,
          balanceCalls: calls('getMultipleAccounts') - balances,
        };
      };
      const idle = { seen: [], signatureCalls: 0, balanceCalls: Math.ceil(accounts / 100) };

      // What this process has not read before (the two new addresses at least) is read signature by
      // signature, and again until the cursor has passed the bank that first showed its balance.
      expect((await read()).signatureCalls).toBeGreaterThanOrEqual(2);
      await read();
      // Then nothing moves: one balance call for all of them, no signatures.
      for (let n = 0; n < 3; n++) expect(await read()).toEqual(idle);

      // A deposit the balances show before the cursor reaches its slot: read (not found yet, its slot not
      // deep enough), and read again once it is, where it is found.
      const sent = await deposit(id, '3');
      const early = await read(1);
      expect(early.seen).toEqual([]);
      expect(early.signatureCalls).toBeGreaterThan(0);
      const paid = await read();
      expect(paid.seen).toEqual([
        expect.objectContaining({ txHash: sent.tx_hash, to: owner, code: 'USDT', units: 3_000_000n }),
      ]);
      expect(paid.signatureCalls).toBeGreaterThan(0);
      // Read until the cursor passes the bank that showed it, found once; then idle again.
      expect((await read()).seen).toEqual([]);
      expect(await read()).toEqual(idle);

      // An account the service has signed a send from (a refund) is read every time, moved or not: a
      // refund and a deposit of the same amount in one read leave the balance where it was.
      const [recorded] = await env.database.db
        .insert(chainSends)
        .values({
          idempotencyKey: `reader-test:${other}`,
          chainNodeId,
          attempt: 1,
          fromAddress: other,
          nonce: 0,
          rawTransaction: 'never broadcast',
          txHash: `reader-test-${other}`,
          state: 'rejected',
        })
        .returning();
      try {
        for (let n = 0; n < 2; n++) {
          const again = await read();
          expect(again.seen).toEqual([]);
          expect(again.signatureCalls).toBeGreaterThan(0);
          expect(again.signatureCalls).toBeLessThanOrEqual(2);
        }
      } finally {
        await env.database.db.delete(chainSends).where(eq(chainSends.id, recorded!.id));
      }
    } finally {
      watcher = startWatcher();
    }
  });
});

describe('SOLANA closed addresses, read for late deposits once a minute on their own cursor', () => {
  /** Both cursors of the node. */
  const cursors = async () => {
    const [row] = await env.database.db
      .select({ main: chainNodes.scannedBlock, closed: chainNodes.lateScannedBlock })
      .from(chainNodes)
      .where(eq(chainNodes.id, chainNodeId));
    return row!;
  };
  const transfersTo = async (hash: string) =>
    env.database.db.select().from(chainTransfers).where(eq(chainTransfers.txHash, hash));
  /** A payin paid in full and closed, read by a scan of every address (the watcher stopped). */
  const closedPayin = async () => {
    const { transaction_id: id } = await payin(10);
    await deposit(id, '10');
    node.mine(CONFIRMATIONS - 1);
    await scan();
    await expect
      .poll(() => status(id), { timeout: 15_000, interval: 100 })
      .toMatchObject({ status: 'SUCCESS' });
    return id;
  };
  it('leaves them out of the scan every poll, and reads them from where they were last read: no slot unread', async () => {
    await watcher.stop();
    let slow: { stop(): Promise<void> } | undefined;
    try {
      const closedId = await closedPayin();
      // A watcher that reads closed addresses once an hour: on its first pass, then not again in this test.
      // A slot for that first pass to read, so it is over (both cursors at the tip) before anything is paid.
      node.mine(1);
      const tip = node.head() - BigInt(CONFIRMATIONS - 1);
      slow = startChainWatcher({
        db: env.database.db,
        temporal: env.client,
        masterKey: env.config.MASTER_KEY,
        log,
        pollMs: 100,
        closedEveryMs: 3_600_000,
      });
      await expect.poll(cursors, { timeout: 15_000 }).toEqual({ main: tip, closed: tip });
      // A late deposit into the closed payment, then one into an open payment in a later slot.
      const late = await deposit(closedId, '2');
      const { transaction_id: openId } = await payin(10);
      const paid = await deposit(openId, '10');
      node.mine(CONFIRMATIONS - 1);
      await expect
        .poll(async () => (await transfersTo(paid.tx_hash)).length, { timeout: 15_000, interval: 100 })
        .toBe(1);
      // The scan every poll passed the late deposit's slot without reading the closed address...
      const [seenOpen] = await transfersTo(paid.tx_hash);
      const passed = await cursors();
      expect(passed.main!).toBeGreaterThanOrEqual(seenOpen!.block);
      expect(passed.closed!).toBeLessThan(seenOpen!.block);
      expect(await transfersTo(late.tx_hash)).toEqual([]);
      await slow.stop();
      slow = undefined;

      // ...and the read of closed addresses takes it up from where it last stopped: found, handed over once.
      await scan();
      const [seenLate] = await transfersTo(late.tx_hash);
      expect(seenLate).toMatchObject({ transactionId: closedId, amount: '2.000000000000000000' });
      expect(seenLate!.block).toBeLessThan(seenOpen!.block);
      const after = await cursors();
      expect(after.closed).toBe(after.main);
      await expect
        .poll(
          async () =>
            (
              await env.database.db
                .select()
                .from(cryptoDeposits)
                .where(eq(cryptoDeposits.txHash, late.tx_hash))
            ).length,
          { timeout: 15_000, interval: 100 },
        )
        .toBe(1);
    } finally {
      await slow?.stop();
      watcher = startWatcher();
    }
  });

  it('reads from the main cursor as it was when their own was never set, however the main one moved since', async () => {
    await watcher.stop();
    try {
      const closedId = await closedPayin();
      // As a node registered, or one from before there was a second cursor: closed addresses were read with
      // the open ones, up to the main cursor.
      await env.database.db
        .update(chainNodes)
        .set({ lateScannedBlock: null })
        .where(eq(chainNodes.id, chainNodeId));
      const { main } = await cursors();
      // A read of closed addresses with no new slot writes nothing; then scans of the open ones alone move
      // the main cursor past a late deposit.
      await scan();
      expect(await cursors()).toEqual({ main, closed: null });
      const late = await deposit(closedId, '2');
      node.mine(CONFIRMATIONS - 1);
      await scan({ closed: false });
      const passed = await cursors();
      expect(passed.main!).toBeGreaterThan(main!);
      expect(passed.closed).toBe(main);
      expect(await transfersTo(late.tx_hash)).toEqual([]);
      await scan();
      expect(await transfersTo(late.tx_hash)).toEqual([
        expect.objectContaining({ transactionId: closedId, amount: '2.000000000000000000' }),
      ]);
      expect(await cursors()).toEqual({ main: passed.main, closed: passed.main });
    } finally {
      watcher = startWatcher();
    }
  });

  it('moves their cursor back with the main one when another cluster answers at the URL', async () => {
    await watcher.stop();
    try {
      await scan();
      const [before] = await env.database.db.select().from(chainNodes).where(eq(chainNodes.id, chainNodeId));
      expect(before!.lateScannedBlock).toBe(before!.scannedBlock);
      // As a ledger started afresh at the URL would leave it: the slot last read is another cluster's.
      await env.database.db
        .update(chainNodes)
        .set({ scannedHash: `another-cluster:${before!.scannedBlock}` })
        .where(eq(chainNodes.id, chainNodeId));
      await scan();
      const [after] = await env.database.db.select().from(chainNodes).where(eq(chainNodes.id, chainNodeId));
      expect(after!.scannedBlock).toBeLessThan(before!.scannedBlock!);
      expect(after!.lateScannedBlock).toBe(after!.scannedBlock);
    } finally {
      watcher = startWatcher();
    }
  });
});

describe('SOLANA sends: refunds from the deposit, on-ramp sends from the treasury', () => {
  it('refunds an excess by merchant setting as a real token transfer from the deposit back to its sender', async () => {
    const refunding = await env.createMerchant();
    await env.database.db
      .update(merchants)
      .set({ overpaidPolicy: 'refund' })
      .where(eq(merchants.id, refunding.merchant_id));
    const client = merchantClient(env.app, refunding);
    const { transaction_id: id, deposit_address: owner } = await payin(10, client);
    const faucetBefore = await node.tokenBalance(faucetOwner, mint);
    await deposit(id, '11.5', client);
    node.mine(CONFIRMATIONS - 1);
    await expect
      .poll(() => status(id, client), { timeout: 15_000, interval: 100 })
      .toMatchObject({
        status: 'SUCCESS',
        data: { crypto_payment_status: 'OVERPAID', crypto_paid_amount: 11.5 },
      });
    const refunded = async () => {
      const rows = await env.database.db
        .select()
        .from(cryptoDeposits)
        .where(eq(cryptoDeposits.transactionId, id));
      return rows.find((r) => r.refundTxHash);
    };
    await expect.poll(async () => (await refunded())?.refundAmount, { timeout: 15_000 }).toMatch(/^1\.50*$/);
    // A Solana signature: the excess left the deposit's own token account for the faucet's.
    expect((await refunded())!.refundTxHash).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    expect(await node.tokenBalance(owner, mint)).toBe(10_000_000n);
    expect(await node.tokenBalance(faucetOwner, mint)).toBe(faucetBefore - 10_000_000n);
    // The refund is the service's own send from the deposit address, never read as a deposit.
    const read = await env.database.db
      .select()
      .from(chainTransfers)
      .where(eq(chainTransfers.transactionId, id));
    expect(read).toHaveLength(1);
    // Reconciled: the refund landed once, in a finalized slot.
    expect(await sendBreaksOf(env, id, 31)).toEqual([]);
  });

  it("reads a late deposit made while the watcher was stopped for longer than its window, by the chain's clock", async () => {
    const { transaction_id: id } = await payin(10);
    await deposit(id, '10');
    node.mine(CONFIRMATIONS - 1);
    await expect
      .poll(() => status(id), { timeout: 15_000, interval: 100 })
      .toMatchObject({ status: 'SUCCESS' });
    await watcher.stop();
    try {
      // Read eight days after the payment closed, a deposit made six days after it: within the 7-day window
      // by the chain's clock (the whole ledger two days old), past it by the reader's.
      node.timeOffset = -2n * 86_400n;
      await env.database.db
        .update(transactions)
        .set({ updatedAt: sql`now() - interval '8 days'` })
        .where(eq(transactions.id, id));
      const late = await deposit(id, '2');
      node.mine(CONFIRMATIONS - 1);
      await scan();
      const [seen] = await env.database.db
        .select()
        .from(chainTransfers)
        .where(eq(chainTransfers.txHash, late.tx_hash));
      expect(seen).toMatchObject({ transactionId: id, amount: '2.000000000000000000' });
      const [kept] = await env.database.db
        .select()
        .from(cryptoDeposits)
        .where(eq(cryptoDeposits.txHash, late.tx_hash));
      // The payment closed long ago: held for ops, never counted; and reconciled with the chain.
      expect(kept).toMatchObject({ disposition: 'held', countedInPayment: false });
      expect(await chainBreaksOf(env, id, { node: chainNodeId, block: seen!.block })).toEqual([]);
      expect((await status(id)).data.crypto_paid_amount).toBe(10);
    } finally {
      node.timeOffset = 0n;
      watcher = startWatcher();
    }
  });

  it('sends once per key, retried or concurrent; an on-ramp send leaves from the treasury', async () => {
    const recipient = (await randomSigner()).signer.address;
    const before = await node.tokenBalance(treasuryAddress, mint);
    const request = {
      idempotencyKey: `onramp:${recipient}`,
      transactionId: `onramp-${recipient}`,
      to: recipient,
      code: 'USDT',
      units: 3_000_000n,
      decimals: 6,
    };
    const watched = (await chainNodeById(env.database.db, env.config.MASTER_KEY, chainNodeId))!;
    const sent = await Promise.all([
      sendOnSolana(env.database.db, watched, request),
      sendOnSolana(env.database.db, watched, request),
    ]);
    expect(sent[1]).toBe(sent[0]);
    expect(await sendOnSolana(env.database.db, watched, request)).toBe(sent[0]);
    expect(await node.tokenBalance(recipient, mint)).toBe(3_000_000n);
    expect(await node.tokenBalance(treasuryAddress, mint)).toBe(before - 3_000_000n);
    const rows = await env.database.db
      .select()
      .from(chainSends)
      .where(eq(chainSends.idempotencyKey, request.idempotencyKey));
    expect(rows.map((r) => [r.attempt, r.state, r.fromAddress])).toEqual([[1, 'mined', treasuryAddress]]);
  });

  it('signs anew only once an attempt can no longer land: never on a refusal alone', async () => {
    const recipient = (await randomSigner()).signer.address;
    const watched = (await chainNodeById(env.database.db, env.config.MASTER_KEY, chainNodeId))!;
    // Signed and stored, never broadcast (its caller gone): it goes out as it is on the next try.
    const request = {
      idempotencyKey: `lost:${recipient}`,
      transactionId: `lost-${recipient}`,
      to: recipient,
      code: 'USDT',
      units: 1_000_000n,
      decimals: 6,
    };
    await signSolanaSend(env.database.db, watched, request, 1);
    const [stored] = await env.database.db
      .select()
      .from(chainSends)
      .where(eq(chainSends.idempotencyKey, request.idempotencyKey));
    expect(await sendOnSolana(env.database.db, watched, request)).toBe(stored!.txHash);

    // Its blockhash expired before it went out: it can never land, so a second attempt goes.
    const expired = { ...request, idempotencyKey: `expired:${recipient}` };
    await signSolanaSend(env.database.db, watched, expired, 1);
    node.mine(152);
    const second = await sendOnSolana(env.database.db, watched, expired);
    const attempts = await env.database.db
      .select()
      .from(chainSends)
      .where(eq(chainSends.idempotencyKey, expired.idempotencyKey));
    expect(attempts.map((r) => [r.attempt, r.state]).sort()).toEqual([
      [1, 'rejected'],
      [2, 'mined'],
    ]);
    expect(second).toBe(attempts.find((r) => r.attempt === 2)!.txHash);
    expect(await node.tokenBalance(recipient, mint)).toBe(2_000_000n);

    // More than the treasury holds: the node refuses it, and the send waits for its expiry, unsigned anew.
    const tooMuch = { ...request, idempotencyKey: `too-much:${recipient}`, units: 10n ** 15n };
    await expect(sendOnSolana(env.database.db, watched, tooMuch)).rejects.toThrow('was refused');
    await expect(sendOnSolana(env.database.db, watched, tooMuch)).rejects.toThrow('was refused');
    const refused = await env.database.db
      .select()
      .from(chainSends)
      .where(eq(chainSends.idempotencyKey, tooMuch.idempotencyKey));
    expect(refused.map((r) => [r.attempt, r.state])).toEqual([[1, 'broadcast']]);
  }, 120_000);

  it('never voids a send a node behind the signing could still see land, nor one whose history is pruned', async () => {
    const recipient = (await randomSigner()).signer.address;
    const watched = (await chainNodeById(env.database.db, env.config.MASTER_KEY, chainNodeId))!;
    const request = {
      idempotencyKey: `lagging:${recipient}`,
      transactionId: `lagging-${recipient}`,
      to: recipient,
      code: 'USDT',
      units: 1_000_000n,
      decimals: 6,
    };
    const quick = { landingWaitMs: 100 };
    const states = async (key: string) =>
      (await env.database.db.select().from(chainSends).where(eq(chainSends.idempotencyKey, key)))
        .map((r) => [r.attempt, r.state])
        .sort();
    try {
      // Broadcast, taken by the node, not landed yet: waiting.
      node.hold = true;
      await expect(sendOnSolana(env.database.db, watched, request, quick)).rejects.toThrow('not final yet');
      expect(await states(request.idempotencyKey)).toEqual([[1, 'broadcast']]);
      // The URL's next answers come from a backend far behind, past whose view the blockhash looks long
      // gone: it cannot speak for the signing slot, so the send only waits.
      node.lag = 1_000n;
      await expect(sendOnSolana(env.database.db, watched, request, quick)).rejects.toThrow('not final yet');
      expect(await states(request.idempotencyKey)).toEqual([[1, 'broadcast']]);
      // It lands after all: the one attempt, paid once.
      node.lag = 0n;
      node.release();
      const [first] = await env.database.db
        .select()
        .from(chainSends)
        .where(eq(chainSends.idempotencyKey, request.idempotencyKey));
      expect(await sendOnSolana(env.database.db, watched, request, quick)).toBe(first!.txHash);
      expect(await node.tokenBalance(recipient, mint)).toBe(1_000_000n);

      // Landed, and long past its last valid height, asked of a status backend behind the block it landed
      // in: no trace there, yet it cannot be void. Waiting; then the backend catches up.
      const landedLate = { ...request, idempotencyKey: `landed-late:${recipient}` };
      node.hold = true;
      await expect(sendOnSolana(env.database.db, watched, landedLate, quick)).rejects.toThrow(
        'not final yet',
      );
      node.hold = false;
      node.release();
      node.mine(152);
      node.statusLag = 200n;
      await expect(sendOnSolana(env.database.db, watched, landedLate, quick)).rejects.toThrow(
        'not final yet',
      );
      expect(await states(landedLate.idempotencyKey)).toEqual([[1, 'broadcast']]);
      // One that has reached the signing slot but not the block it landed in answers no trace: the
      // finalized blocks still show it, so it is not void either.
      node.statusLag = 153n;
      await expect(sendOnSolana(env.database.db, watched, landedLate, quick)).rejects.toThrow(
        'a new attempt is signed only once it can no longer land',
      );
      expect(await states(landedLate.idempotencyKey)).toEqual([[1, 'broadcast']]);
      node.statusLag = 0n;
      await sendOnSolana(env.database.db, watched, landedLate, quick);
      expect(await states(landedLate.idempotencyKey)).toEqual([[1, 'mined']]);
      expect(await node.tokenBalance(recipient, mint)).toBe(2_000_000n);

      // Broadcast, never reaching a leader, then past its last valid height: void, and one new attempt.
      const lost = { ...request, idempotencyKey: `never-landed:${recipient}` };
      node.hold = true;
      await expect(sendOnSolana(env.database.db, watched, lost, quick)).rejects.toThrow('not final yet');
      node.drop();
      node.hold = false;
      node.mine(152);
      // A backend whose list of finalized blocks stops short cannot prove it: the same bytes go out again
      // (refused now, expired), and nothing new is signed.
      node.blocksLag = 100n;
      await expect(sendOnSolana(env.database.db, watched, lost, quick)).rejects.toThrow(
        'a new attempt is signed only once it can no longer land',
      );
      expect(await states(lost.idempotencyKey)).toEqual([[1, 'broadcast']]);
      node.blocksLag = 0n;
      // A node whose history starts after the signing cannot tell: ops are asked, nothing is signed.
      node.prunedBefore = node.head();
      await expect(sendOnSolana(env.database.db, watched, lost, quick)).rejects.toThrow('is not available');
      expect(await states(lost.idempotencyKey)).toEqual([[1, 'broadcast']]);
      node.prunedBefore = 0n;
      await sendOnSolana(env.database.db, watched, lost, quick);
      expect(await states(lost.idempotencyKey)).toEqual([
        [1, 'rejected'],
        [2, 'mined'],
      ]);
      expect(await node.tokenBalance(recipient, mint)).toBe(3_000_000n);
    } finally {
      node.hold = false;
      node.lag = 0n;
      node.statusLag = 0n;
      node.blocksLag = 0n;
      node.prunedBefore = 0n;
      node.drop();
    }
  });

  it('refunds what a live payment gives back to the customer who sent it', async () => {
    // mainnet-beta's genesis hash: a live node must serve it.
    const mainnet = new LocalSolanaNode({ genesisHash: '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d' });
    await mainnet.listen();
    try {
      const holder = (await randomSigner()).signer;
      const usdt = await mintTestToken(mainnet, holder, 6, 1_000_000_000n);
      const registered = await addChainNode(env.database.db, env.config.MASTER_KEY, {
        mode: 'live',
        network: 'SOLANA',
        rpcUrl: mainnet.url,
        confirmations: CONFIRMATIONS,
        tokens: { USDT: usdt },
      });
      await fundTreasury(mainnet, holder, usdt, registered.treasury!, 1_000_000n, 6);
      const credentials = await env.createMerchant();
      await env.database.db
        .update(merchants)
        .set({ overpaidPolicy: 'refund' })
        .where(eq(merchants.id, credentials.merchant_id));
      const live = merchantClient(env.app, credentials);
      // Offered in live mode now that a live node watches it: USDT, the only SOLANA asset of the catalogue.
      const offered = (
        await live.postPlain('/api/v1/live/crypto/currencies', { country: 'GB', amount: 1000 })
      ).json().data as { code: string; networks: string[] }[];
      expect(offered.map((c) => `${c.code}:${c.networks.join(',')}`)).toEqual(['USDT:SOLANA']);
      const created = await live.post(
        '/api/v1/live/crypto/payin',
        payinRequest({ amount: 10, crypto_currency: 'USDT', crypto_network: 'SOLANA', country: 'GB' }),
      );
      expect(created.statusCode, created.payload).toBe(200);
      const { transaction_id: id, deposit_address: owner } = created.json().data as {
        transaction_id: string;
        deposit_address: string;
      };
      expect(owner).toMatch(BASE58_ADDRESS);
      // The customer's own transfer (no faucet in live mode): 12 USDT for 10.
      const holderBefore = await mainnet.tokenBalance(holder.address, usdt);
      const signature = await mainnet.send(
        holder,
        await tokenPayment(holder, holder, holder.address, owner, usdt, 12_000_000n, 6),
      );
      mainnet.mine(CONFIRMATIONS - 1);
      await expect
        .poll(async () => (await live.get(`/api/live/status/${id}`)).json(), {
          timeout: 15_000,
          interval: 100,
        })
        .toMatchObject({
          status: 'SUCCESS',
          data: { crypto_payment_status: 'OVERPAID', crypto_paid_amount: 12 },
        });
      await expect
        .poll(
          async () =>
            (
              await env.database.db.select().from(cryptoDeposits).where(eq(cryptoDeposits.transactionId, id))
            )[0]?.refundTxHash,
          { timeout: 15_000 },
        )
        .toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
      const [row] = await env.database.db
        .select()
        .from(cryptoDeposits)
        .where(eq(cryptoDeposits.transactionId, id));
      expect(row).toMatchObject({ txHash: signature, disposition: 'counted', heldAmount: null });
      expect(row!.refundAmount).toMatch(/^2\.0+$/);
      expect(await mainnet.tokenBalance(holder.address, usdt)).toBe(holderBefore - 12_000_000n + 2_000_000n);
      const [read] = await env.database.db
        .select()
        .from(chainTransfers)
        .where(eq(chainTransfers.txHash, signature));
      expect(read!.sender).toBe(holder.address);
    } finally {
      // Not watched once its ledger is gone.
      await retireChainNodesAt(env.database.db, mainnet.url);
      await mainnet.close();
    }
  });
});

describe('registering a SOLANA node', () => {
  const spec = (overrides: Record<string, unknown> = {}) => ({
    mode: 'test' as const,
    network: 'SOLANA',
    rpcUrl: node.url,
    confirmations: CONFIRMATIONS,
    tokens: { USDT: mint },
    ...overrides,
  });
  const refusal = (overrides: Record<string, unknown>) =>
    addChainNode(env.database.db, env.config.MASTER_KEY, spec(overrides)).then(
      () => 'taken',
      (error: unknown) => (error instanceof ChainNodeError ? error.message : String(error)),
    );

  it('refuses a local cluster for live mode, a mint at other decimals, and a missing mint', async () => {
    expect(await refusal({ mode: 'live' })).toBe(
      `A live SOLANA node must serve mainnet-beta; the one at ${node.url} serves local.`,
    );
    const other = await mintTestToken(node, (await randomSigner()).signer, 9, 1n);
    expect(await refusal({ tokens: { USDT: other } })).toBe(
      `USDT at ${other} has 9 decimals on this node (is it a mint?); the catalogue says 6.`,
    );
    expect(await refusal({ tokens: {} })).toBe(
      'The catalogue offers USDT on SOLANA: give its mint (--token USDT=<base58 mint>).',
    );
    expect(await refusal({ tokens: { USDT: '0xdAC17F958D2ee523a2206206994597C13D831ec7' } })).toBe(
      'USDT: 0xdAC17F958D2ee523a2206206994597C13D831ec7 is not a mint address.',
    );
    expect(await refusal({ tokens: { USDT: mint, SOL: mint } })).toBe(
      'SOL is the native coin of SOLANA, not a token: leave it out.',
    );
    // A mint of another token program (Token-2022): its token accounts are not the ones watched.
    const token2022 = (await randomSigner()).signer.address;
    const mintAccount = node.svm.getAccount(address(mint));
    if (!mintAccount.exists) throw new Error('the test mint is gone');
    node.svm.setAccount({
      ...mintAccount,
      address: token2022,
      programAddress: address('TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb'),
    });
    expect(await refusal({ tokens: { USDT: token2022 } })).toBe(
      `USDT at ${token2022} belongs to program TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb, not the SPL token program (TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA).`,
    );
  });

  it('answers as a JSON-RPC server does whatever it is sent, and keeps serving', async () => {
    expect((await fetch(node.url)).status).toBe(405);
    const garbage = await fetch(node.url, { method: 'POST', body: 'not json' });
    expect(await garbage.json()).toMatchObject({ error: { code: -32700 } });
    const slot = await fetch(node.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'getSlot' }),
    });
    expect(await slot.json()).toEqual({ jsonrpc: '2.0', id: 7, result: Number(node.head()) });
  });

  it('registers a node with the CLI, mints as base58, and lists it with its treasury', async () => {
    const added = await runCliIn(
      env,
      'chains',
      'add',
      '--mode',
      'test',
      '--network',
      'solana',
      '--rpc-url',
      node.url,
      '--confirmations',
      '32',
      '--token',
      `USDT=${mint}`,
      '--json',
    );
    expect(added.code, added.stderr).toBe(0);
    const registered = JSON.parse(added.stdout) as Record<string, unknown>;
    expect(registered.treasury).toMatch(BASE58_ADDRESS);
    expect(registered.note).toContain('Fund the treasury with SOL');
    const listed = JSON.parse((await runCliIn(env, 'chains', 'list', '--json')).stdout) as Record<
      string,
      unknown
    >[];
    expect(listed).toContainEqual(
      expect.objectContaining({
        chain_node_id: registered.chain_node_id,
        network: 'SOLANA',
        confirmations: 32,
        tokens: { USDT: mint },
        treasury: registered.treasury,
        state: 'active',
      }),
    );
  });
});
