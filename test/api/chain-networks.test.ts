import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { createWalletClient, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ANVIL_KEYS } from '../../src/dev/chains/anvil';
import { startTestEnv, type TestEnv } from '../helpers/env';
import { startLocalChain, type LocalChain } from '../helpers/chain';
import { runCliIn } from '../helpers/cli';
import { merchantClient, payinRequest, type MerchantClient } from '../helpers/merchant-client';
import { createPayin, cryptoStatus, testDeposit } from '../helpers/crypto-payins';
import {
  chainTransfers,
  cryptoDeposits,
  depositAddresses,
  ledgerEntries,
  merchants,
} from '../../src/db/schema/index';
import { erc20Abi, rpc } from '../../src/chain/evm/rpc';
import { addChainNode } from '../../src/chain/registration';
import { fromTronAddress, toTronAddress } from '../../src/chain/tron/address';
import { expectChainReconciled } from '../helpers/chain-reconciliation';
import { sandboxChain } from '../../activities/connectors/sandbox-chain';

/**
 * Every network a node speaking Ethereum's JSON-RPC watches, besides ETHEREUM (test/api/evm-chain.test.ts):
 * one anvil per network answering that network's chain id, with USDT at the catalogue's decimals. TRON's
 * nodes answer the same JSON-RPC for TRC-20 logs; its addresses are shown as T-addresses.
 */
const NETWORKS = [
  { network: 'BINANCE_SMART_CHAIN', chainId: 56, decimals: 18 },
  { network: 'POLYGON', chainId: 137, decimals: 6 },
  { network: 'AVALANCHE', chainId: 43114, decimals: 6 },
  { network: 'TRON', chainId: 728126428, decimals: 6 },
] as const;

const CONFIRMATIONS = 3;
const TRON_ADDRESS = /^T[1-9A-HJ-NP-Za-km-z]{33}$/;

let env: TestEnv;
let merchant: MerchantClient;
const chains = new Map<string, LocalChain>();

beforeAll(async () => {
  env = await startTestEnv({ ALLOW_PRIVATE_URLS: 'true' });
  // One watcher (the first chain's) polls every node, as one worker process does.
  for (const [i, n] of NETWORKS.entries()) {
    chains.set(
      n.network,
      await startLocalChain(env, CONFIRMATIONS, { network: n.network, chainId: n.chainId, watch: i === 0 }),
    );
  }
  merchant = merchantClient(env.app, await env.createMerchant());
});
afterAll(async () => {
  // The first chain's watcher stops first: no scan of a node already stopped.
  for (const chain of chains.values()) await chain.close();
  await env?.close();
});

const payin = (network: string, amount: number, currency = 'USDT', client = merchant) =>
  createPayin(client, { amount, crypto_currency: currency, crypto_network: network, country: 'GB' });
const deposit = (id: string, amount: string, client = merchant) => testDeposit(client, id, amount);
const status = (id: string, client = merchant) => cryptoStatus(client, id);

/** The 20 bytes the node speaks for an address the API showed. */
const onChain = (network: string, shown: string) =>
  network === 'TRON' ? fromTronAddress(shown)! : (shown as Hex);

describe.each(NETWORKS)('crypto deposits on $network (anvil, chain id $chainId)', (n) => {
  const chain = () => chains.get(n.network)!;
  const receiptOf = (hash: string) =>
    rpc(chain().node.url).waitForTransactionReceipt({
      hash: hash as Hex,
      pollingInterval: 100,
      timeout: 15_000,
    });

  it(`answers chain id ${n.chainId}, with USDT at the catalogue's ${n.decimals} decimals`, async () => {
    const client = rpc(chain().node.url);
    expect(await client.getChainId()).toBe(n.chainId);
    const decimals = await client.readContract({
      address: chain().tokens.USDT as Hex,
      abi: erc20Abi,
      functionName: 'decimals',
    });
    expect(decimals).toBe(n.decimals);
  });

  it('settles a real USDT transfer as FULLPAID only once it is deep enough, crediting once', async () => {
    const { transaction_id: id, deposit_address: address } = await payin(n.network, 10);
    expect(address).toMatch(n.network === 'TRON' ? TRON_ADDRESS : /^0x[0-9a-f]{40}$/);
    const before = await chain().tokenBalance('USDT', onChain(n.network, address));

    const sent = await deposit(id, '10');
    expect(sent).toMatchObject({ disposition: 'pending', confirmations_required: CONFIRMATIONS });
    expect((await receiptOf(sent.tx_hash)).status).toBe('success');
    expect(await chain().tokenBalance('USDT', onChain(n.network, address))).toBe(
      before + 10n * 10n ** BigInt(n.decimals),
    );

    // Below the depth: a scan of the chain as it is now, run to its end, leaves the transfer alone.
    await chain().scan();
    await chain().mine(CONFIRMATIONS - 2);
    await chain().scan();
    expect(await status(id)).toMatchObject({
      status: 'REDIRECT',
      data: { crypto_payment_status: null, crypto_paid_amount: 0 },
    });

    await chain().mine(1);
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
    const over = await payin(n.network, 10);
    const short = await payin(n.network, 10);
    await deposit(over.transaction_id, '6');
    await deposit(over.transaction_id, '6.5');
    await deposit(short.transaction_id, '4');
    await chain().mine(CONFIRMATIONS - 1);
    await expect
      .poll(() => status(over.transaction_id), { timeout: 15_000, interval: 100 })
      .toMatchObject({
        status: 'SUCCESS',
        data: { crypto_payment_status: 'OVERPAID', crypto_paid_amount: 12.5 },
      });
    // Short: counted, and the payment waits for the rest until its window closes.
    await expect
      .poll(async () => (await status(short.transaction_id)).data, { timeout: 15_000, interval: 100 })
      .toMatchObject({ crypto_payment_status: 'UNDERPAID', crypto_paid_amount: 4 });
    expect((await status(short.transaction_id)).status).toBe('REDIRECT');
  });

  it('hands every transaction its own deposit address, never one handed out before', async () => {
    const created = await Promise.all(Array.from({ length: 6 }, () => payin(n.network, 10)));
    expect(new Set(created.map((c) => c.deposit_address)).size).toBe(6);
    const rows = await env.database.db.select().from(depositAddresses);
    expect(new Set(rows.map((r) => r.address)).size).toBe(rows.length);
    expect(new Set(rows.map((r) => r.hdIndex)).size).toBe(rows.length);
    for (const c of created) {
      expect(rows.filter((r) => r.transactionId === c.transaction_id).map((r) => r.address)).toEqual([
        onChain(n.network, c.deposit_address),
      ]);
    }
  });
});

describe('TRON, watched for tokens only', () => {
  it('keeps TRX on the sandbox chain in test mode: no address of the node, and its test deposits count there', async () => {
    const trx = await payin('TRON', 10, 'TRX');
    // The sandbox chain's address for it (well-formed, as TRON's are), not one of the node's.
    expect(trx.deposit_address).toBe(
      await sandboxChain().depositAddress({
        transactionId: trx.transaction_id,
        network: 'TRON',
        mode: 'test',
      }),
    );
    const rows = await env.database.db
      .select()
      .from(depositAddresses)
      .where(eq(depositAddresses.transactionId, trx.transaction_id));
    expect(rows).toEqual([]);
    expect(await deposit(trx.transaction_id, '1')).toMatchObject({ disposition: 'counted' });
    expect((await status(trx.transaction_id)).data).toMatchObject({
      crypto_payment_status: 'UNDERPAID',
      crypto_paid_amount: 1,
    });
  });

  it('holds for ops, never sends, what a live TRON payment gives back: the service signs nothing there', async () => {
    const tron = chains.get('TRON')!;
    await addChainNode(env.database.db, env.config.MASTER_KEY, {
      mode: 'live',
      network: 'TRON',
      rpcUrl: tron.node.url,
      confirmations: CONFIRMATIONS,
      tokens: { USDT: toTronAddress(tron.tokens.USDT!) },
    });
    const credentials = await env.createMerchant();
    await env.database.db
      .update(merchants)
      .set({ overpaidPolicy: 'refund' })
      .where(eq(merchants.id, credentials.merchant_id));
    const live = merchantClient(env.app, credentials);
    const created = await live.post(
      '/api/v1/live/crypto/payin',
      payinRequest({ amount: 10, crypto_currency: 'USDT', crypto_network: 'TRON', country: 'GB' }),
    );
    expect(created.statusCode, created.payload).toBe(200);
    const { transaction_id: id, deposit_address: address } = created.json().data as {
      transaction_id: string;
      deposit_address: string;
    };
    expect(address).toMatch(TRON_ADDRESS);
    // A customer's own transfer (no faucet in live mode): 12 USDT for 10.
    const customer = privateKeyToAccount(ANVIL_KEYS.customer);
    const wallet = createWalletClient({ account: customer, transport: http(tron.node.url) });
    const hash = await wallet.writeContract({
      address: tron.tokens.USDT as Hex,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [fromTronAddress(address)!, 12_000_000n],
      chain: null,
    });
    await rpc(tron.node.url).waitForTransactionReceipt({ hash, pollingInterval: 100 });
    await tron.mine(CONFIRMATIONS - 1);
    await expect
      .poll(async () => (await live.get(`/api/live/status/${id}`)).json(), { timeout: 15_000, interval: 100 })
      .toMatchObject({
        status: 'SUCCESS',
        data: { crypto_payment_status: 'OVERPAID', crypto_paid_amount: 12 },
      });
    const [row] = await env.database.db
      .select()
      .from(cryptoDeposits)
      .where(eq(cryptoDeposits.transactionId, id));
    expect(row).toMatchObject({
      txHash: hash,
      disposition: 'counted',
      heldAmount: '2.000000000000000000',
      refundTxHash: null,
    });
    expect(row!.reason).toContain('There is no sender address to refund to.');
    // The sender stays on record beside the transfer the watcher read.
    const [read] = await env.database.db.select().from(chainTransfers).where(eq(chainTransfers.txHash, hash));
    expect(read!.sender).toBe(customer.address.toLowerCase());
  });

  it('refunds an excess in test mode on the sandbox chain: the service signs nothing on TRON', async () => {
    const refunding = await env.createMerchant();
    await env.database.db
      .update(merchants)
      .set({ overpaidPolicy: 'refund' })
      .where(eq(merchants.id, refunding.merchant_id));
    const client = merchantClient(env.app, refunding);
    const { transaction_id: id } = await payin('TRON', 10, 'USDT', client);
    await deposit(id, '11.5', client);
    await chains.get('TRON')!.mine(CONFIRMATIONS - 1);
    await expect
      .poll(() => status(id, client), { timeout: 15_000, interval: 100 })
      .toMatchObject({
        status: 'SUCCESS',
        data: { crypto_payment_status: 'OVERPAID', crypto_paid_amount: 11.5 },
      });
    await expect
      .poll(
        async () => {
          const rows = await env.database.db
            .select()
            .from(cryptoDeposits)
            .where(eq(cryptoDeposits.transactionId, id));
          return rows.find((r) => r.refundTxHash)?.refundAmount;
        },
        { timeout: 15_000 },
      )
      .toBe('1.500000000000000000');
    const refund = (
      await env.database.db.select().from(cryptoDeposits).where(eq(cryptoDeposits.transactionId, id))
    ).find((r) => r.refundTxHash)!;
    // Not a transaction of the node: the sandbox chain's.
    await expect(
      rpc(chains.get('TRON')!.node.url).getTransactionReceipt({ hash: refund.refundTxHash as Hex }),
    ).rejects.toThrow();
  });

  it('registers a TRON node with T-addresses and lists it with T-addresses', async () => {
    const tron = chains.get('TRON')!;
    const token = toTronAddress(tron.tokens.USDT!);
    const added = await runCliIn(
      env,
      'chains',
      'add',
      '--mode',
      'live',
      '--network',
      'TRON',
      '--rpc-url',
      tron.node.url,
      '--confirmations',
      '19',
      '--token',
      `USDT=${token}`,
      '--json',
    );
    expect(added.code, added.stderr).toBe(0);
    const node = JSON.parse(added.stdout) as { chain_node_id: string; treasury: string; note: string };
    expect(node.treasury).toMatch(TRON_ADDRESS);
    expect(node.note).toContain('token deposits only');
    const listed = JSON.parse((await runCliIn(env, 'chains', 'list', '--json')).stdout) as Record<
      string,
      unknown
    >[];
    expect(listed.find((l) => l.chain_node_id === node.chain_node_id)).toMatchObject({
      network: 'TRON',
      mode: 'live',
      tokens: { USDT: token },
      treasury: node.treasury,
    });
    const native = await runCliIn(
      env,
      'chains',
      'add',
      '--mode',
      'live',
      '--network',
      'TRON',
      '--rpc-url',
      tron.node.url,
      '--token',
      `USDT=${token}`,
      '--token',
      `TRX=${token}`,
    );
    expect(native.stderr).toContain('TRX is the native coin of TRON, not a token: leave it out.');
  });
});

describe('one watcher, one node stalled', () => {
  it('settles a deposit on another network while one node answers nothing', async () => {
    // TRON's anvil stops answering, as a node hung mid-request does: each of its requests waits for the
    // RPC timeout (10 s, tried twice). Three registered nodes stand on it by now (the test node, and the
    // two live ones registered above), so three of the watcher's four slots stall and one serves the other
    // networks. Passing over the nodes one after another, the watcher made them wait a minute.
    const stalled = chains.get('TRON')!.node.pid!;
    process.kill(stalled, 'SIGSTOP');
    try {
      // The stalled passes are under way before the deposit elsewhere.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const { transaction_id: id } = await payin('POLYGON', 10);
      await deposit(id, '10');
      await chains.get('POLYGON')!.mine(CONFIRMATIONS - 1);
      await expect
        .poll(async () => (await status(id)).status, { timeout: 15_000, interval: 100 })
        .toBe('SUCCESS');
    } finally {
      process.kill(stalled, 'SIGCONT');
    }
  });
});
