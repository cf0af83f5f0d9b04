import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { createWalletClient, erc20Abi as erc20, http, keccak256, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ANVIL_KEYS } from '../../src/dev/chains/anvil';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { startLocalChain, type LocalChain } from '../helpers/chain';
import { runCliIn } from '../helpers/cli';
import { openHostedPage } from '../helpers/hosted-form';
import { merchantClient, payinRequest, rampRequest, type MerchantClient } from '../helpers/merchant-client';
import {
  chainNodes,
  chainSends,
  chainTransfers,
  cryptoDeposits,
  depositAddresses,
  ledgerEntries,
  merchants,
} from '../../src/db/schema/index';
import { nodeChains } from '../../activities/connectors/node-chains';
import { sandboxChain } from '../../activities/connectors/sandbox-chain';
import { rpc } from '../../src/chain/evm/rpc';
import type { MerchantCredentials } from '../../src/merchants/accounts';
import { insertPayinTransaction } from '../helpers/fixtures';
import { chainBreaksOf, expectChainReconciled, sendBreaksOf } from '../helpers/chain-reconciliation';
import { cryptoPayin } from '../../workflows/crypto-payin';
import { firstAnswerUpdate, workflowIds } from '../../src/contracts';

const CONFIRMATIONS = 3;

let env: TestEnv;
let chain: LocalChain;
let credentials: MerchantCredentials;
let merchant: MerchantClient;

beforeAll(async () => {
  env = await startTestEnv();
  chain = await startLocalChain(env, CONFIRMATIONS);
  credentials = await env.createMerchant();
  merchant = merchantClient(env.app, credentials);
});
afterAll(async () => {
  await chain?.close();
  await env?.close();
});

const payin = async (client: MerchantClient, amount: number, currency = 'USDT') => {
  const response = await client.post(
    '/api/v1/test/crypto/payin',
    payinRequest({ amount, crypto_currency: currency, crypto_network: 'ETHEREUM' }),
  );
  expect(response.statusCode, response.payload).toBe(200);
  return response.json().data as { transaction_id: string; deposit_address: string };
};

const deposit = async (client: MerchantClient, id: string, amount: string) => {
  const response = await client.postPlain(`/api/v1/test/crypto/${id}/deposit`, { amount });
  expect(response.statusCode, response.payload).toBe(200);
  return response.json().deposit as { tx_hash: Hex; disposition: string; confirmations_required: number };
};

const status = async (client: MerchantClient, id: string) =>
  (await client.get(`/api/test/status/${id}`)).json() as {
    status: string;
    data: { crypto_payment_status: string | null; crypto_paid_amount: number };
  };

/** A refund of 0.25 USDT to the faucet customer through the chain connector, keyed `refund:<id>:<name>`. */
const refundToCustomer = (id: string, name: string) =>
  nodeChains(env.database.db, env.config.MASTER_KEY, sandboxChain()).send({
    idempotencyKey: `refund:${id}:${name}`,
    transactionId: id,
    mode: 'test',
    network: 'ETHEREUM',
    address: chain.customer,
    amount: '0.25',
    currency: 'USDT',
  });

// The deposit answers once the node has the transfer in its pool: anvil mines it a moment later.
const receiptOf = (hash: string) =>
  rpc(chain.node.url).waitForTransactionReceipt({ hash: hash as Hex, pollingInterval: 100, timeout: 15_000 });

describe('crypto deposits on a local EVM chain (anvil), watched with confirmations', () => {
  it('settles a real USDT transfer as FULLPAID only once it has its confirmations, crediting once', async () => {
    const { transaction_id: id, deposit_address: address } = await payin(merchant, 10);
    expect(address).toMatch(/^0x[0-9a-f]{40}$/);
    const before = await chain.tokenBalance('USDT', address);

    const sent = await deposit(merchant, id, '10');
    expect(sent).toMatchObject({ disposition: 'pending', confirmations_required: CONFIRMATIONS });
    expect((await receiptOf(sent.tx_hash)).status).toBe('success');
    expect(await chain.tokenBalance('USDT', address)).toBe(before + 10_000_000n);

    // One confirmation: a scan of the chain as it is now, run to its end, leaves this transfer alone.
    await chain.scan();
    expect(await status(merchant, id)).toMatchObject({
      status: 'REDIRECT',
      data: { crypto_payment_status: null, crypto_paid_amount: 0 },
    });

    await chain.mine(CONFIRMATIONS - 1);
    await expect
      .poll(async () => (await status(merchant, id)).status, { timeout: 15_000, interval: 100 })
      .toBe('SUCCESS');
    expect((await status(merchant, id)).data).toMatchObject({
      crypto_payment_status: 'FULLPAID',
      crypto_paid_amount: 10,
    });
    const [row] = await env.database.db
      .select()
      .from(cryptoDeposits)
      .where(eq(cryptoDeposits.transactionId, id));
    expect(row).toMatchObject({
      txHash: sent.tx_hash,
      sender: chain.customer.toLowerCase(),
      disposition: 'counted',
    });
    const credits = await env.database.db.select().from(ledgerEntries).where(eq(ledgerEntries.reference, id));
    expect(credits.map((e) => [e.step, e.amount])).toEqual([['credit', 1000n]]);
    // The watcher timed its passes over the node, under the node's network (docs/operations.md).
    const passes = (await chain.metrics.chainScanSeconds.get()).values.find(
      (v) => v.metricName === 'payments_chain_scan_seconds_count' && v.labels.network === 'ETHEREUM',
    );
    expect(passes?.value).toBeGreaterThan(0);
  });

  it('reconciles a counted deposit with the chain, and reports one missed or recorded for another amount', async () => {
    const { transaction_id: id } = await payin(merchant, 10);
    await receiptOf((await deposit(merchant, id, '10')).tx_hash);
    await chain.mine(CONFIRMATIONS);
    await expect
      .poll(async () => (await status(merchant, id)).status, { timeout: 15_000, interval: 100 })
      .toBe('SUCCESS');
    await expectChainReconciled(env, id);
  });

  it('reports a deposit address holding more than its recorded deposits at the cut-off, until it holds what they add up to', async () => {
    const { transaction_id: id, deposit_address: shown } = await payin(merchant, 10);
    await receiptOf((await deposit(merchant, id, '10')).tx_hash);
    await chain.mine(CONFIRMATIONS);
    await expect
      .poll(async () => (await status(merchant, id)).status, { timeout: 15_000, interval: 100 })
      .toBe('SUCCESS');
    const address = shown.toLowerCase();
    const client = rpc(chain.node.url);
    const setBalance = async (wei: bigint) => {
      await client.request({
        method: 'anvil_setBalance' as never,
        params: [address, `0x${wei.toString(16)}`] as never,
      });
      await chain.mine(1);
    };
    const atHead = async () => chainBreaksOf(env, id, { node: chain.chainNodeId, block: await chain.head() });
    expect(await atHead()).toEqual([]);
    // Ether reaches the address in no transaction the watcher reads (as a contract's transfer would).
    await setBalance(10n ** 15n);
    expect(await atHead()).toEqual([`amount balance:${chain.chainNodeId}:${address}:ETH`]);
    // Gone again: the address holds what its deposits add up to.
    await setBalance(0n);
    expect(await atHead()).toEqual([]);
  });

  it('is held up by neither a zero-value transfer nor a deposit no workflow takes: the next customer settles', async () => {
    const customer = createWalletClient({
      account: privateKeyToAccount(ANVIL_KEYS.customer),
      transport: http(chain.node.url),
    });
    const transfer = (to: string, units: bigint) =>
      customer.writeContract({
        address: chain.tokens.USDT as Address,
        abi: erc20,
        functionName: 'transfer',
        args: [to as Address, units],
        chain: null,
      });

    // One transaction's gas: a zero-value token transfer into someone's deposit address.
    const victim = await payin(merchant, 10);
    await transfer(victim.deposit_address, 0n);
    // A deposit no workflow takes: this payin's workflow was terminated (by ops, by mistake) while its
    // deposit was on its way.
    const input = await insertPayinTransaction(env.database.db, credentials, {
      cryptoCurrency: 'USDT',
      cryptoNetwork: 'ETHEREUM',
      decimals: 6,
      expectedUnits: '5000000',
    });
    const refusing = await env.client.workflow.start(cryptoPayin, {
      workflowId: workflowIds.transaction(input.transactionId),
      taskQueue: env.config.TEMPORAL_TASK_QUEUE,
      args: [input],
    });
    await refusing.executeUpdate(firstAnswerUpdate);
    await refusing.terminate('terminated by mistake');
    const opened = await env.database.db.query.transactions.findFirst({
      where: (row, { eq }) => eq(row.id, input.transactionId),
    });
    const refusedAddress = (opened!.details as { deposit_address: string }).deposit_address;
    const refusedHash = await transfer(refusedAddress, 5_000_000n);
    // Then another customer pays in full.
    const paying = await payin(merchant, 10);
    const sent = await deposit(merchant, paying.transaction_id, '10');
    await chain.mine(CONFIRMATIONS - 1);

    await expect
      .poll(async () => (await status(merchant, paying.transaction_id)).status, { timeout: 15_000 })
      .toBe('SUCCESS');
    expect((await status(merchant, paying.transaction_id)).data.crypto_payment_status).toBe('FULLPAID');
    // The refused deposit is held for ops with the reason, not dropped; the zero-value one is no deposit.
    await expect
      .poll(
        async () =>
          (
            await env.database.db
              .select()
              .from(cryptoDeposits)
              .where(eq(cryptoDeposits.transactionId, input.transactionId))
          )[0],
        { timeout: 15_000 },
      )
      .toMatchObject({
        txHash: refusedHash,
        disposition: 'held',
        reason: 'Arrived after the transaction closed.',
      });
    expect(
      await env.database.db
        .select()
        .from(cryptoDeposits)
        .where(eq(cryptoDeposits.transactionId, victim.transaction_id)),
    ).toEqual([]);
    expect((await status(merchant, victim.transaction_id)).data).toMatchObject({ crypto_paid_amount: 0 });
    // Every transfer the watcher found is handed over, and its cursor stands at the confirmed tip.
    await expect
      .poll(async () => (await env.database.db.select().from(chainTransfers)).filter((r) => !r.handedOverAt))
      .toEqual([]);
    const waiting = await env.database.db.select().from(chainTransfers);
    expect(waiting.map((row) => row.txHash)).toEqual(expect.arrayContaining([refusedHash, sent.tx_hash]));
    const [node] = await env.database.db
      .select()
      .from(chainNodes)
      .where(eq(chainNodes.id, chain.chainNodeId));
    await expect
      .poll(async () => {
        const [now] = await env.database.db
          .select()
          .from(chainNodes)
          .where(eq(chainNodes.id, chain.chainNodeId));
        return now!.scannedBlock;
      })
      .toBe((await chain.head()) - BigInt(CONFIRMATIONS - 1));
    expect(node).toBeDefined();
  });

  it('adds up a split USDT payment to OVERPAID and refunds the excess on chain by merchant setting', async () => {
    const refunding = await env.createMerchant();
    await env.database.db
      .update(merchants)
      .set({ overpaidPolicy: 'refund' })
      .where(eq(merchants.id, refunding.merchant_id));
    const client = merchantClient(env.app, refunding);
    const { transaction_id: id } = await payin(client, 10);
    const customerBefore = await chain.tokenBalance('USDT', chain.customer);

    await deposit(client, id, '4');
    await chain.mine(CONFIRMATIONS - 1);
    await expect
      .poll(async () => (await status(client, id)).data.crypto_payment_status, { timeout: 15_000 })
      .toBe('UNDERPAID');
    expect((await status(client, id)).status).toBe('REDIRECT');

    await deposit(client, id, '7.5');
    await chain.mine(CONFIRMATIONS - 1);
    await expect.poll(async () => (await status(client, id)).status, { timeout: 15_000 }).toBe('SUCCESS');
    expect((await status(client, id)).data).toMatchObject({
      crypto_payment_status: 'OVERPAID',
      crypto_paid_amount: 11.5,
    });

    // The 1.5 USDT excess went back to the sender in a mined transfer from the treasury.
    await expect
      .poll(
        async () => {
          const rows = await env.database.db
            .select()
            .from(cryptoDeposits)
            .where(eq(cryptoDeposits.transactionId, id));
          return rows.find((r) => r.refundTxHash)?.refundTxHash;
        },
        { timeout: 15_000 },
      )
      .toMatch(/^0x[0-9a-f]{64}$/);
    const rows = await env.database.db
      .select()
      .from(cryptoDeposits)
      .where(eq(cryptoDeposits.transactionId, id));
    const refunded = rows.find((r) => r.refundTxHash)!;
    expect(refunded.refundAmount).toBe('1.500000000000000000');
    expect((await receiptOf(refunded.refundTxHash!)).status).toBe('success');
    expect(await chain.tokenBalance('USDT', chain.customer)).toBe(customerBefore - 11_500_000n + 1_500_000n);
  });

  it('settles the native coin as the token: exact ETH is FULLPAID, split and over OVERPAID, short UNDERPAID', async () => {
    const exact = await payin(merchant, 30, 'ETH');
    const split = await payin(merchant, 30, 'ETH');
    const short = await payin(merchant, 30, 'ETH');
    await deposit(merchant, exact.transaction_id, '0.01');
    await deposit(merchant, split.transaction_id, '0.006');
    await deposit(merchant, split.transaction_id, '0.0045');
    await deposit(merchant, short.transaction_id, '0.004');
    expect(await rpc(chain.node.url).getBalance({ address: exact.deposit_address as Hex })).toBe(10n ** 16n);
    await chain.mine(CONFIRMATIONS - 1);
    await expect
      .poll(async () => (await status(merchant, exact.transaction_id)).status, { timeout: 15_000 })
      .toBe('SUCCESS');
    expect((await status(merchant, exact.transaction_id)).data.crypto_payment_status).toBe('FULLPAID');
    await expect
      .poll(() => status(merchant, split.transaction_id), { timeout: 15_000 })
      .toMatchObject({
        status: 'SUCCESS',
        data: { crypto_payment_status: 'OVERPAID', crypto_paid_amount: 0.0105 },
      });
    await expect
      .poll(async () => (await status(merchant, short.transaction_id)).data, { timeout: 15_000 })
      .toMatchObject({ crypto_payment_status: 'UNDERPAID', crypto_paid_amount: 0.004 });
    expect((await status(merchant, short.transaction_id)).status).toBe('REDIRECT');
  });

  it('never counts a deposit that arrives after the payment completed: refunded on chain or held for ops', async () => {
    const { transaction_id: id } = await payin(merchant, 10);
    await deposit(merchant, id, '10');
    await chain.mine(CONFIRMATIONS - 1);
    await expect.poll(async () => (await status(merchant, id)).status, { timeout: 15_000 }).toBe('SUCCESS');

    const late = await deposit(merchant, id, '2');
    await chain.mine(CONFIRMATIONS - 1);
    await expect
      .poll(
        async () => {
          const [row] = await env.database.db
            .select()
            .from(cryptoDeposits)
            .where(eq(cryptoDeposits.txHash, late.tx_hash));
          return row?.disposition;
        },
        { timeout: 15_000 },
      )
      .not.toBeUndefined();
    const [row] = await env.database.db
      .select()
      .from(cryptoDeposits)
      .where(eq(cryptoDeposits.txHash, late.tx_hash));
    // Refunded while the workflow runs, held for ops once it has closed: never dropped, never counted.
    expect(['refunded', 'held']).toContain(row!.disposition);
    if (row!.disposition === 'refunded') expect((await receiptOf(row!.refundTxHash!)).status).toBe('success');
    expect((await status(merchant, id)).data.crypto_paid_amount).toBe(10);
  });

  it('never counts a deposit that a reorg removed before it had its confirmations', async () => {
    const { transaction_id: id } = await payin(merchant, 10);
    const before = await chain.snapshot();
    const sent = await deposit(merchant, id, '10');
    expect((await receiptOf(sent.tx_hash)).status).toBe('success');
    // Seen at one and two confirmations of the three it needs...
    await chain.scan();
    await chain.mine(1);
    await chain.scan();
    // ...then the blocks holding it are replaced by others: the transfer is gone from the chain.
    await chain.revert(before);
    await chain.mine(CONFIRMATIONS + 2);
    await expect(rpc(chain.node.url).getTransactionReceipt({ hash: sent.tx_hash as Hex })).rejects.toThrow(
      /could not be found/,
    );

    await chain.scan();
    expect(await status(merchant, id)).toMatchObject({
      status: 'REDIRECT',
      data: { crypto_payment_status: null, crypto_paid_amount: 0 },
    });
    const rows = await env.database.db
      .select()
      .from(cryptoDeposits)
      .where(eq(cryptoDeposits.transactionId, id));
    expect(rows).toEqual([]);
  });

  it('hands every transaction its own deposit address, never one handed out before', async () => {
    const created = await Promise.all(Array.from({ length: 8 }, () => payin(merchant, 10)));
    const addresses = created.map((c) => c.deposit_address);
    expect(new Set(addresses).size).toBe(8);
    const rows = await env.database.db.select().from(depositAddresses);
    expect(new Set(rows.map((r) => r.address)).size).toBe(rows.length);
    expect(new Set(rows.map((r) => r.hdIndex)).size).toBe(rows.length);
    for (const c of created) {
      expect(rows.filter((r) => r.transactionId === c.transaction_id).map((r) => r.address)).toEqual([
        c.deposit_address,
      ]);
    }
  });

  it('sends the crypto of an ONRAMP from the treasury in a real transfer once the customer has paid', async () => {
    const created = await merchant.post(
      '/api/v1/test/crypto',
      rampRequest({
        fiat_amount: 15,
        crypto_currency: 'USDT',
        crypto_network: 'ETHEREUM',
        wallet_address: chain.customer,
      }),
    );
    expect(created.statusCode, created.payload).toBe(200);
    const id = created.json().data.transaction_id as string;
    const before = await chain.tokenBalance('USDT', chain.customer);
    const path = `/api/v1/test/crypto/checkout/${id}`;
    const paid = await (await openHostedPage(env.app, path)).submit({ decision: 'approve' });
    expect(paid.statusCode).toBe(303);
    await expect.poll(async () => (await status(merchant, id)).status, { timeout: 15_000 }).toBe('SUCCESS');
    const txHash = ((await merchant.get(`/api/test/status/${id}`)).json() as { data: { tx_hash: string } })
      .data.tx_hash;
    expect((await receiptOf(txHash)).status).toBe('success');
    expect(await chain.tokenBalance('USDT', chain.customer)).toBe(before + 15_000_000n);
    // Reconciled: the send landed once.
    expect(await sendBreaksOf(env, id, 31)).toEqual([]);
  });

  it('sends once per idempotency key: a retried or concurrent send gets the first transfer, not a second', async () => {
    const { transaction_id: id } = await payin(merchant, 10);
    const send = () => refundToCustomer(id, 'retried');
    const before = await chain.tokenBalance('USDT', chain.customer);
    const [first, concurrent] = await Promise.all([send(), send()]);
    const retried = await send();
    expect(concurrent).toBe(first);
    expect(retried).toBe(first);
    expect((await receiptOf(first)).status).toBe('success');
    expect(await chain.tokenBalance('USDT', chain.customer)).toBe(before + 250_000n);
    const attempts = await env.database.db
      .select()
      .from(chainSends)
      .where(eq(chainSends.idempotencyKey, `refund:${id}:retried`));
    expect(attempts.map((a) => [a.attempt, a.state])).toEqual([[1, 'mined']]);
  });

  it("reports a refund dropped from the node's pool, and one still waiting there, until each lands once", async () => {
    const { transaction_id: id } = await payin(merchant, 10);
    const refund = (name: string) => refundToCustomer(id, name);
    const client = rpc(chain.node.url);
    const request = (method: string, params: unknown[]) =>
      client.request({ method: method as never, params: params as never });
    const signed = async (name: string) => {
      await expect
        .poll(async () => {
          const [row] = await env.database.db
            .select()
            .from(chainSends)
            .where(eq(chainSends.idempotencyKey, `refund:${id}:${name}`));
          return row?.txHash;
        })
        .toBeDefined();
      const [row] = await env.database.db
        .select()
        .from(chainSends)
        .where(eq(chainSends.idempotencyKey, `refund:${id}:${name}`));
      await expect
        .poll(() => client.getTransaction({ hash: row!.txHash as Hex }).catch(() => null))
        .not.toBeNull();
      return row!.txHash as Hex;
    };
    await request('evm_setAutomine', [false]);
    // The first calls wait for their mining, which the test holds back: their answers are not awaited.
    const first: Promise<unknown>[] = [];
    try {
      // One stays in the pool unmined; the next (its nonce after it) is dropped from the pool.
      first.push(refund('waiting').catch(() => undefined));
      await signed('waiting');
      first.push(refund('dropped').catch(() => undefined));
      await request('anvil_dropTransaction', [await signed('dropped')]);
      // Within half an hour of signing neither is reported; past it, each is.
      expect(await sendBreaksOf(env, id)).toEqual([]);
      expect(await sendBreaksOf(env, id, 31)).toEqual([
        `missing_at_source send:refund:${id}:dropped`,
        `stale_pending send:refund:${id}:waiting`,
      ]);
    } finally {
      await request('evm_setAutomine', [true]);
    }
    // The waiting one is mined; the dropped one is broadcast again by its retry, then mined: each landed once.
    await request('evm_mine', []);
    expect((await receiptOf(await refund('waiting'))).status).toBe('success');
    expect((await receiptOf(await refund('dropped'))).status).toBe('success');
    await Promise.all(first);
    expect(await sendBreaksOf(env, id, 31)).toEqual([]);
    // A second attempt of one refund recorded as landed too: the refund went out twice.
    await env.database.db.insert(chainSends).values({
      ...(await env.database.db
        .select()
        .from(chainSends)
        .where(eq(chainSends.idempotencyKey, `refund:${id}:waiting`))
        .then(([row]) => {
          const { id: _id, ...kept } = row!;
          return kept;
        })),
      idempotencyKey: `refund:${id}:dropped`,
      attempt: 2,
      nonce: 1_000_000,
    });
    expect(await sendBreaksOf(env, id)).toEqual([`duplicate send:refund:${id}:dropped`]);
  });

  it('registers a node with the CLI, checking its tokens against the catalogue, and lists it', async () => {
    const base = ['chains', 'add', '--mode', 'live', '--network', 'ETHEREUM', '--rpc-url', chain.node.url];
    const missing = await runCliIn(env, ...base);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      'The catalogue offers USDT on ETHEREUM: give its contract (--token USDT=0x...).',
    );
    const notAToken = await runCliIn(env, ...base, '--token', `USDT=${chain.customer}`);
    expect(notAToken.code).toBe(1);
    expect(notAToken.stderr).toContain('has no decimals on this node; the catalogue says 6.');
    const omni = await runCliIn(
      env,
      'chains',
      'add',
      '--mode',
      'live',
      '--network',
      'OMNI',
      '--rpc-url',
      chain.node.url,
    );
    expect(omni.stderr).toContain(
      'OMNI is not a network this service watches on a node (ETHEREUM, BINANCE_SMART_CHAIN, POLYGON, AVALANCHE, TRON, BITCOIN, SOLANA).',
    );

    const added = await runCliIn(
      env,
      ...base,
      '--confirmations',
      '12',
      '--token',
      `USDT=${chain.tokens.USDT}`,
      '--json',
    );
    expect(added.code, added.stderr).toBe(0);
    const node = JSON.parse(added.stdout) as { chain_node_id: string; treasury: string };
    expect(node.treasury).toMatch(/^0x[0-9a-fA-F]{40}$/);
    const listed = await runCliIn(env, 'chains', 'list', '--json');
    const nodes = JSON.parse(listed.stdout) as Record<string, unknown>[];
    expect(nodes.find((n) => n.chain_node_id === node.chain_node_id)).toMatchObject({
      mode: 'live',
      confirmations: 12,
      treasury: node.treasury,
      state: 'active',
      test_faucet: false,
    });
    expect(listed.stdout).not.toMatch(/seed/i);
  });

  it('refuses to register the native coin as a token, or a token the catalogue does not offer', async () => {
    const base = ['chains', 'add', '--mode', 'live', '--network', 'ethereum', '--rpc-url', chain.node.url];
    const usdt = `USDT=${chain.tokens.USDT}`;
    const native = await runCliIn(env, ...base, '--token', usdt, '--token', `ETH=${chain.tokens.USDT}`);
    expect(native.code).toBe(1);
    expect(native.stderr).toContain('ETH is the native coin of ETHEREUM, not a token: leave it out.');
    const unknown = await runCliIn(env, ...base, '--token', usdt, '--token', `DOGE=${chain.tokens.USDT}`);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('The catalogue offers no DOGE on ETHEREUM (it offers ETH, USDT).');
    const help = await runCliIn(env, 'chains', 'add', '--help');
    expect(help.code).toBe(0);
    expect(help.stderr).toContain('chains add --mode test|live');
  });

  it('refuses a test deposit the faucet cannot pay, and the next deposit still goes through', async () => {
    const { transaction_id: id } = await payin(merchant, 10);
    const tooMuch = await merchant.postPlain(`/api/v1/test/crypto/${id}/deposit`, { amount: '100000000' });
    expect(tooMuch.statusCode).toBe(422);
    expect(tooMuch.json().message).toMatch(/^The test faucet holds [\d.]+ USDT: deposit at most that\.$/);
    await deposit(merchant, id, '10');
    await chain.mine(CONFIRMATIONS - 1);
    await expect.poll(async () => (await status(merchant, id)).status, { timeout: 15_000 }).toBe('SUCCESS');
  });

  it('heals nonce gaps: a transfer whose broadcast was lost goes out, a refused one gives its nonce back', async () => {
    const { db } = env.database;
    const client = rpc(chain.node.url);
    const customer = privateKeyToAccount(ANVIL_KEYS.customer);
    const nonce = await client.getTransactionCount({ address: customer.address, blockTag: 'pending' });
    const fees = await client.estimateFeesPerGas();
    const sign = (n: number, value: bigint) =>
      customer.signTransaction({
        chainId: 31337,
        to: chain.customer,
        value,
        nonce: n,
        gas: 21_000n,
        maxFeePerGas: fees.maxFeePerGas,
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
        type: 'eip1559',
      });
    // Signed and stored, never seen by the node (its broadcast answer "lost"): a gap at `nonce`...
    const lost = await sign(nonce, 1n);
    // ...and one the node will refuse (more coin than the account holds) right after it.
    const refused = await sign(nonce + 1, 10n ** 30n);
    const [chainNodeId] = [chain.chainNodeId];
    await db.insert(chainSends).values([
      {
        idempotencyKey: 'lost-broadcast',
        chainNodeId,
        attempt: 1,
        fromAddress: customer.address,
        nonce,
        rawTransaction: lost,
        txHash: keccak256(lost),
      },
      {
        idempotencyKey: 'refused-broadcast',
        chainNodeId,
        attempt: 1,
        fromAddress: customer.address,
        nonce: nonce + 1,
        rawTransaction: refused,
        txHash: keccak256(refused),
      },
    ]);

    const { transaction_id: id } = await payin(merchant, 10);
    const sent = await deposit(merchant, id, '10');
    expect((await receiptOf(keccak256(lost))).status).toBe('success');
    const rows = await db
      .select()
      .from(chainSends)
      .where(eq(chainSends.txHash, keccak256(refused)));
    expect(rows.map((r) => r.state)).toEqual(['rejected']);
    const [faucet] = await db.select().from(chainSends).where(eq(chainSends.txHash, sent.tx_hash));
    expect(faucet!.nonce).toBe(nonce + 1);
    await chain.mine(CONFIRMATIONS - 1);
    await expect.poll(async () => (await status(merchant, id)).status, { timeout: 15_000 }).toBe('SUCCESS');
  });

  it('refuses a made-up transaction hash on a real chain', async () => {
    const { transaction_id: id } = await payin(merchant, 10);
    const response = await merchant.postPlain(`/api/v1/test/crypto/${id}/deposit`, {
      amount: '10',
      tx_hash: 'abc123',
    });
    expect(response.statusCode).toBe(422);
    expect(response.json().message).toBe('This network is a real chain: the transfer gets its hash there.');
  });

  it('reads again when the chain lost blocks it had read, so a deposit in a re-made block counts', async () => {
    const { transaction_id: id } = await payin(merchant, 10);
    const before = await chain.snapshot();
    await chain.mine(10);
    await chain.scan();
    // The node goes back to an older state (a local chain restored after a hard kill): the watcher had
    // read blocks the chain no longer has, and the deposit lands in a block with one of their numbers.
    await chain.revert(before);
    await deposit(merchant, id, '10');
    await chain.mine(CONFIRMATIONS - 1);
    await chain.scan();
    await expect.poll(async () => (await status(merchant, id)).status, { timeout: 15_000 }).toBe('SUCCESS');
  });

  it('refuses to retire the active node, or one whose transactions are open, unless forced', async () => {
    const active = await runCliIn(env, 'chains', 'retire', chain.chainNodeId);
    expect(active.code).toBe(1);
    expect(active.stderr).toContain(`${chain.chainNodeId} is the active node for test ETHEREUM`);
  });

  // Last: it replaces the test-mode node the other tests use.
  it('keeps watching a replaced node: a payin opened on it still settles, then it can be retired', async () => {
    const { transaction_id: id, deposit_address: address } = await payin(merchant, 10);
    const replaced = await runCliIn(
      env,
      'chains',
      'add',
      '--mode',
      'test',
      '--network',
      'ETHEREUM',
      '--rpc-url',
      chain.node.url,
      '--confirmations',
      String(CONFIRMATIONS),
      '--token',
      `USDT=${chain.tokens.USDT}`,
    );
    expect(replaced.code, replaced.stderr).toBe(0);
    const fresh = await payin(merchant, 10);
    expect(fresh.deposit_address).not.toBe(address);

    await deposit(merchant, id, '10');
    await chain.mine(CONFIRMATIONS - 1);
    await expect.poll(async () => (await status(merchant, id)).status, { timeout: 15_000 }).toBe('SUCCESS');

    const listed = JSON.parse((await runCliIn(env, 'chains', 'list', '--json')).stdout) as Record<
      string,
      string
    >[];
    expect(listed.find((n) => n.chain_node_id === chain.chainNodeId)?.state).toBe('replaced (still watched)');
    // Payins of the earlier tests (the short ones, the eight fresh ones) still wait on its addresses.
    const refused = await runCliIn(env, 'chains', 'retire', chain.chainNodeId);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/open transaction\(s\) still take deposits/);
    const retired = await runCliIn(env, 'chains', 'retire', chain.chainNodeId, '--force');
    expect(retired.code, retired.stderr).toBe(0);
    const after = JSON.parse((await runCliIn(env, 'chains', 'list', '--json')).stdout) as Record<
      string,
      string
    >[];
    expect(after.find((n) => n.chain_node_id === chain.chainNodeId)?.state).toBe('retired');
  });
});
