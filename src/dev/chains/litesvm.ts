import { createServer, type Server } from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { FailedTransactionMetadata, LiteSVM } from 'litesvm';
import {
  address,
  createKeyPairSignerFromPrivateKeyBytes,
  getBase58Decoder,
  getBase58Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  lamports,
  type Instruction,
  type KeyPairSigner,
  type Transaction,
} from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import {
  getInitializeMint2Instruction,
  getMintSize,
  getMintToCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import type { Db } from '../../db/client';
import { findCryptoAsset } from '../../coins/catalogue';
import { activeChainNode, retireChainNodesAt } from '../../chain/nodes';
import { addChainNode } from '../../chain/registration';
import { paceChain } from './anvil';
import { associatedTokenAccount } from '../../chain/solana/accounts';
import {
  createAssociatedTokenAccountIdempotent,
  signedTransaction,
  tokenPayment,
} from '../../chain/solana/instructions';
import { solanaRpc } from '../../chain/solana/rpc';

/** Blockhashes a transaction may name, as on Solana: those of the last 151 blocks (its own height + 150). */
const RECENT_BLOCKHASHES = 151;
const TOKEN_ACCOUNT_SIZE = 165;

interface TokenBalance {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  uiTokenAmount: { amount: string; decimals: number; uiAmount: null; uiAmountString: string };
}

interface Landed {
  signature: string;
  slot: bigint;
  blockTime: bigint;
  err: unknown;
  accountKeys: string[];
  header: {
    numRequiredSignatures: number;
    numReadonlySignedAccounts: number;
    numReadonlyUnsignedAccounts: number;
  };
  recentBlockhash: string;
  instructions: { programIdIndex: number; accounts: number[]; data: string; stackHeight: null }[];
  preBalances: bigint[];
  postBalances: bigint[];
  preTokenBalances: TokenBalance[];
  postTokenBalances: TokenBalance[];
}

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/**
 * A local Solana node for `npm run dev` and the tests: LiteSVM (Solana's runtime in-process, with the real SPL token and
 * associated token programs) behind the JSON-RPC calls the service makes, answered in Solana's
 * documented shapes. LiteSVM has no RPC server and no history, so this keeps what a node's ledger would:
 * one block per landed transaction (its slot, blockhash and time), the signatures touching each account,
 * and each transaction's balances before and after. `mine` adds empty blocks; `skip` a slot with none.
 */
export class LocalSolanaNode {
  readonly svm = new LiteSVM().withBlockhashCheck(false).withTransactionHistory(0n);
  readonly genesisHash: string;
  private slot = 1_000n;
  /** Blocks made so far: the block height. */
  private height = 0n;
  /** Answers as a node this many slots behind would (a lagging backend behind a load-balanced URL). */
  lag = 0n;
  /** As `lag`, for `getSignatureStatuses` alone (the backend that answers it is behind the others). */
  statusLag = 0n;
  /** As `lag`, for `getBlocksWithLimit` alone: its list ends this many slots early. */
  blocksLag = 0n;
  /** Takes sent transactions without landing them until `release` (a leader that has not got to them). */
  hold = false;
  private held: Transaction[] = [];
  /** The first slot whose blocks the node keeps (`getBlock`): a pruned ledger starts later. */
  prunedBefore = 0n;
  /**
   * Seconds added to every block's time as the node answers it, made or to be made: a negative offset makes
   * the whole ledger older, as a watcher stopped that long would find it.
   */
  timeOffset = 0n;
  /** The slot of the last block made (slots after it may have been skipped). */
  private lastBlock = 0n;
  private readonly blocks = new Map<
    bigint,
    { blockhash: string; parentSlot: bigint; time: bigint; height: bigint }
  >();
  /** The slots of `blocks`, ascending (each block's slot is above the last): a range is found by halving. */
  private readonly blockSlots: bigint[] = [];
  private readonly recent: string[] = [];
  private readonly landed = new Map<string, Landed>();
  private readonly busySlots = new Set<bigint>();
  private readonly signaturesIn = new Map<bigint, string[]>();
  private readonly byAccount = new Map<string, string[]>();
  private server?: Server;
  url = '';
  /** JSON-RPC calls answered so far, by method: what a provider would bill. */
  readonly calls = new Map<string, number>();

  /** A local cluster of its own, unless `genesisHash` names one (mainnet-beta's, to stand in for it). */
  constructor(options: { genesisHash?: string } = {}) {
    this.genesisHash =
      options.genesisHash ?? getBase58Decoder().decode(createHash('sha256').update(randomBytes(16)).digest());
    this.produce();
  }

  /** Listens on `port` of the loopback interface (any free one when 0). */
  async listen(port = 0): Promise<string> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        if (req.method !== 'POST') {
          res.statusCode = 405;
          res.end('JSON-RPC takes POST requests only\n');
          return;
        }
        let answer: object;
        let id: unknown = null;
        try {
          const request = parse(body);
          id = request.id;
          answer = { jsonrpc: '2.0', id, result: this.call(request.method, request.params ?? []) };
        } catch (error) {
          const e = error instanceof RpcError ? error : new RpcError(-32603, String(error));
          answer = { jsonrpc: '2.0', id, error: { code: e.code, message: e.message, data: e.data } };
        }
        res.setHeader('content-type', 'application/json');
        res.end(toJson(answer));
      });
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, '127.0.0.1', resolve);
    });
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async close(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }

  head(): bigint {
    return this.slot;
  }

  /** Whether a transaction landed in the block of `slot`. */
  busy(slot: bigint): boolean {
    return this.busySlots.has(slot);
  }

  /** `count` empty blocks. */
  mine(count: number): void {
    for (let i = 0; i < count; i++) this.produce();
  }

  /** A slot no block was made in (as a leader that missed its turn). */
  skip(): void {
    this.slot += 1n;
  }

  /** Runs a transaction as a node that took it would: in a block of its own, failed ones included. */
  submit(tx: Transaction): { signature: string; err: unknown } {
    const message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
    if (!('instructions' in message)) throw new RpcError(-32602, 'Transaction version not supported');
    const keys = message.staticAccounts.map(String);
    const signature = signatureOf(tx);
    if (this.landed.has(signature)) throw new RpcError(-32002, 'Transaction already processed');
    if (!this.recent.includes(String(message.lifetimeToken))) {
      throw new RpcError(-32002, 'Transaction simulation failed: Blockhash not found', {
        err: 'BlockhashNotFound',
        logs: [],
      });
    }
    const preBalances = keys.map((key) => this.svm.getBalance(address(key)) ?? 0n);
    const preTokenBalances = this.tokenBalances(keys);
    const result = this.svm.sendTransaction(tx);
    const err =
      result instanceof FailedTransactionMetadata ? { InstructionError: String(result.err()) } : null;
    const slot = this.produce();
    const header = message.header;
    this.landed.set(signature, {
      signature,
      slot,
      blockTime: this.blocks.get(slot)!.time,
      err,
      accountKeys: keys,
      header: {
        numRequiredSignatures: header.numSignerAccounts,
        numReadonlySignedAccounts: header.numReadonlySignerAccounts,
        numReadonlyUnsignedAccounts: header.numReadonlyNonSignerAccounts,
      },
      recentBlockhash: String(message.lifetimeToken),
      instructions: message.instructions.map((ix) => ({
        programIdIndex: ix.programAddressIndex,
        accounts: [...(ix.accountIndices ?? [])],
        data: getBase58Decoder().decode(ix.data ?? new Uint8Array()),
        stackHeight: null,
      })),
      preBalances,
      postBalances: keys.map((key) => this.svm.getBalance(address(key)) ?? 0n),
      preTokenBalances,
      postTokenBalances: this.tokenBalances(keys),
    });
    this.busySlots.add(slot);
    this.signaturesIn.set(slot, [...(this.signaturesIn.get(slot) ?? []), signature]);
    for (const key of new Set(keys)) this.byAccount.set(key, [signature, ...(this.byAccount.get(key) ?? [])]);
    return { signature, err };
  }

  /** Signs `instructions` with `payer` (and the signers they name) and submits them; throws if it failed. */
  async send(payer: KeyPairSigner, instructions: Instruction[]): Promise<string> {
    const { signature, err } = this.submit(await this.sign(payer, instructions));
    if (err) throw new Error(`transaction ${signature} failed: ${JSON.stringify(err)}`);
    return signature;
  }

  /** `instructions` as a transaction signed by `payer` (and the signers they name), on the latest blockhash. */
  async sign(payer: KeyPairSigner, instructions: Instruction[]): Promise<Transaction> {
    const lifetime = { blockhash: this.svm.latestBlockhash(), lastValidBlockHeight: this.height + 150n };
    return signedTransaction(payer, lifetime, instructions);
  }

  /** Lands what was held, those whose blockhash is still valid; the others can never land. */
  release(): void {
    const held = this.held;
    this.held = [];
    for (const tx of held) {
      const message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
      if (this.recent.includes(String(message.lifetimeToken))) this.submit(tx);
    }
  }

  /** Forgets what was held: it never reached a leader. */
  drop(): void {
    this.held = [];
  }

  /** The block height at `slot`: the blocks made up to it. */
  private heightAt(slot: bigint): bigint {
    for (let s = slot; s >= 0n && s >= slot - 10_000n; s--) {
      const block = this.blocks.get(s);
      if (block) return block.height;
    }
    return 0n;
  }

  /** What `owner` holds of `mint` in its associated token account. */
  async tokenBalance(owner: string, mint: string): Promise<bigint> {
    const account = this.svm.getAccount(await associatedTokenAccount(owner, mint));
    return account.exists ? readU64(account.data, 64) : 0n;
  }

  /** A new block after `parent`: a fresh blockhash, the clock moved on. */
  private produce(): bigint {
    const parentSlot = this.lastBlock || this.slot;
    this.slot += 1n;
    this.lastBlock = this.slot;
    this.svm.warpToSlot(this.slot);
    this.svm.expireBlockhash();
    const blockhash = String(this.svm.latestBlockhash());
    this.height += 1n;
    const time = BigInt(Math.floor(Date.now() / 1000));
    this.blocks.set(this.slot, { blockhash, parentSlot, time, height: this.height });
    this.blockSlots.push(this.slot);
    this.recent.push(blockhash);
    if (this.recent.length > RECENT_BLOCKHASHES) this.recent.shift();
    return this.slot;
  }

  private tokenBalances(keys: string[]): TokenBalance[] {
    const balances: TokenBalance[] = [];
    keys.forEach((key, accountIndex) => {
      const account = this.svm.getAccount(address(key));
      if (!account.exists || account.programAddress !== TOKEN_PROGRAM_ADDRESS) return;
      if (account.data.length !== TOKEN_ACCOUNT_SIZE) return;
      const mint = getBase58Decoder().decode(account.data.subarray(0, 32));
      const mintAccount = this.svm.getAccount(address(mint));
      const decimals = mintAccount.exists ? mintAccount.data[44]! : 0;
      const amount = readU64(account.data, 64).toString();
      balances.push({
        accountIndex,
        mint,
        owner: getBase58Decoder().decode(account.data.subarray(32, 64)),
        programId: TOKEN_PROGRAM_ADDRESS,
        uiTokenAmount: { amount, decimals, uiAmount: null, uiAmountString: amount },
      });
    });
    return balances;
  }

  private call(method: string, params: unknown[]): unknown {
    this.calls.set(method, (this.calls.get(method) ?? 0) + 1);
    const view = this.slot - this.lag;
    const context = { slot: view };
    /** A node refuses to answer for a slot it has not reached. */
    const reached = (config: unknown) => {
      const wanted = (config as { minContextSlot?: number } | undefined)?.minContextSlot;
      if (wanted !== undefined && BigInt(wanted) > view) {
        throw new RpcError(-32016, 'Minimum context slot has not been reached', { contextSlot: view });
      }
    };
    switch (method) {
      case 'getGenesisHash':
        return this.genesisHash;
      case 'getSlot':
        reached(params[0]);
        return view;
      case 'getBlockHeight':
        reached(params[0]);
        return this.heightAt(view);
      case 'getLatestBlockhash':
        return {
          context,
          value: { blockhash: this.recent.at(-1), lastValidBlockHeight: this.height + 150n },
        };
      case 'getBlock': {
        const slot = BigInt(params[0] as number);
        const block = this.blocks.get(slot);
        const details = (params[1] as { transactionDetails?: string } | undefined)?.transactionDetails;
        if (slot < this.prunedBefore) {
          throw new RpcError(
            -32001,
            `Block ${slot} cleaned up, does not exist on node. First available block: ${this.prunedBefore}`,
          );
        }
        if (!block || slot > view) {
          if (slot > view) throw new RpcError(-32004, `Block not available for slot ${slot}`);
          throw new RpcError(
            -32007,
            `Slot ${slot} was skipped, or missing due to ledger jump to recent snapshot`,
          );
        }
        return {
          blockhash: block.blockhash,
          previousBlockhash: this.blocks.get(block.parentSlot)?.blockhash ?? block.blockhash,
          parentSlot: block.parentSlot,
          blockHeight: block.height,
          blockTime: block.time + this.timeOffset,
          ...(details === 'signatures' ? { signatures: this.signaturesIn.get(slot) ?? [] } : {}),
        };
      }
      case 'getBlockTime': {
        const slot = BigInt(params[0] as number);
        const block = this.blocks.get(slot);
        if (!block || slot > view || slot < this.prunedBefore)
          throw new RpcError(-32009, `Slot ${slot} was skipped, or missing in long-term storage`);
        return block.time + this.timeOffset;
      }
      case 'getBlocksWithLimit': {
        const [start, limit] = params as [number, number];
        const upTo = view - this.blocksLag;
        // Found by halving, so a read costs the same however long the ledger has grown.
        let low = 0;
        let high = this.blockSlots.length;
        while (low < high) {
          const middle = (low + high) >>> 1;
          if (this.blockSlots[middle]! < BigInt(start)) low = middle + 1;
          else high = middle;
        }
        const slots: bigint[] = [];
        for (let i = low; i < this.blockSlots.length && slots.length < limit; i++) {
          if (this.blockSlots[i]! > upTo) break;
          slots.push(this.blockSlots[i]!);
        }
        return slots;
      }
      case 'getEpochInfo':
        reached(params[0]);
        return {
          absoluteSlot: view,
          blockHeight: this.heightAt(view),
          epoch: 0n,
          slotIndex: view,
          slotsInEpoch: 432_000n,
          transactionCount: null,
        };
      case 'getSignaturesForAddress': {
        const [account, options = {}] = params as [
          string,
          { limit?: number; before?: string; until?: string; minContextSlot?: number },
        ];
        reached(options);
        let list = this.byAccount.get(account) ?? [];
        if (options.before) {
          list = list.includes(options.before) ? list.slice(list.indexOf(options.before) + 1) : [];
        }
        if (options.until && list.includes(options.until)) list = list.slice(0, list.indexOf(options.until));
        return list.slice(0, options.limit ?? 1000).map((signature) => {
          const tx = this.landed.get(signature)!;
          return {
            signature,
            slot: tx.slot,
            err: tx.err,
            memo: null,
            blockTime: tx.blockTime + this.timeOffset,
            confirmationStatus: 'finalized',
          };
        });
      }
      case 'getTransaction': {
        const tx = this.landed.get(params[0] as string);
        if (!tx) return null;
        return {
          slot: tx.slot,
          blockTime: tx.blockTime + this.timeOffset,
          version: 0,
          meta: {
            err: tx.err,
            status: tx.err ? { Err: tx.err } : { Ok: null },
            fee: 5000n,
            preBalances: tx.preBalances,
            postBalances: tx.postBalances,
            preTokenBalances: tx.preTokenBalances,
            postTokenBalances: tx.postTokenBalances,
            innerInstructions: [],
            logMessages: [],
            rewards: [],
            loadedAddresses: { writable: [], readonly: [] },
            computeUnitsConsumed: 0n,
          },
          transaction: {
            signatures: [tx.signature],
            message: {
              accountKeys: tx.accountKeys,
              header: tx.header,
              recentBlockhash: tx.recentBlockhash,
              instructions: tx.instructions,
              addressTableLookups: [],
            },
          },
        };
      }
      case 'getSignatureStatuses': {
        const [signatures] = params as [string[]];
        const seenUpTo = view - this.statusLag;
        return {
          context: { slot: seenUpTo },
          value: signatures.map((signature) => {
            const tx = this.landed.get(signature);
            if (!tx || tx.slot > seenUpTo) return null;
            const status = tx.err ? { Err: tx.err } : { Ok: null };
            return {
              slot: tx.slot,
              confirmations: null,
              err: tx.err,
              status,
              confirmationStatus: 'finalized',
            };
          }),
        };
      }
      case 'getAccountInfo': {
        const account = this.svm.getAccount(address(params[0] as string));
        if (!account.exists) return { context, value: null };
        return {
          context,
          value: {
            data: [Buffer.from(account.data).toString('base64'), 'base64'],
            executable: account.executable,
            lamports: account.lamports,
            owner: account.programAddress,
            rentEpoch: 0n,
            space: BigInt(account.data.length),
          },
        };
      }
      case 'getMultipleAccounts': {
        const [keys, options = {}] = params as [
          string[],
          { encoding?: string; dataSlice?: { offset: number; length: number }; minContextSlot?: number },
        ];
        reached(options);
        if (keys.length > 100) throw new RpcError(-32602, 'Too many inputs provided; max 100');
        if (options.encoding !== 'base64') throw new RpcError(-32602, 'Only base64 is served here');
        // The ledger as it is now: its slot, not the lagging view's, is the one these balances are at.
        return {
          context: { slot: this.slot },
          value: keys.map((key) => {
            const account = this.svm.getAccount(address(key));
            if (!account.exists) return null;
            const { offset = 0, length = account.data.length } = options.dataSlice ?? {};
            return {
              data: [
                Buffer.from(account.data.subarray(offset, offset + length)).toString('base64'),
                'base64',
              ],
              executable: account.executable,
              lamports: account.lamports,
              owner: account.programAddress,
              rentEpoch: 0n,
              space: BigInt(account.data.length),
            };
          }),
        };
      }
      case 'getTokenSupply': {
        const account = this.svm.getAccount(address(params[0] as string));
        if (
          !account.exists ||
          account.programAddress !== TOKEN_PROGRAM_ADDRESS ||
          account.data.length !== 82
        ) {
          throw new RpcError(-32602, 'Invalid param: not a Token mint');
        }
        const amount = readU64(account.data, 36).toString();
        return {
          context,
          value: { amount, decimals: account.data[44], uiAmount: null, uiAmountString: amount },
        };
      }
      case 'getTokenAccountBalance': {
        const account = this.svm.getAccount(address(params[0] as string));
        if (!account.exists) throw new RpcError(-32602, 'Invalid param: could not find account');
        const [balance] = this.tokenBalances([params[0] as string]);
        if (!balance) throw new RpcError(-32602, 'Invalid param: not a Token account');
        return { context, value: balance.uiTokenAmount };
      }
      case 'sendTransaction': {
        const [wire, options = {}] = params as [string, { encoding?: string; skipPreflight?: boolean }];
        const bytes =
          options.encoding === 'base64' ? Buffer.from(wire, 'base64') : getBase58Encoder().encode(wire);
        const tx = getTransactionDecoder().decode(bytes);
        if (!options.skipPreflight) {
          const simulated = this.svm.simulateTransaction(tx);
          if (simulated instanceof FailedTransactionMetadata) {
            throw new RpcError(-32002, `Transaction simulation failed: ${String(simulated.err())}`, {
              err: String(simulated.err()),
              logs: simulated.meta().logs(),
            });
          }
        }
        if (this.hold) {
          this.held.push(tx);
          return signatureOf(tx);
        }
        return this.submit(tx).signature;
      }
      default:
        throw new RpcError(-32601, `Method not found: ${method}`);
    }
  }
}

/** A transaction's signature: its fee payer's, the first. */
function signatureOf(tx: Transaction): string {
  const message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  return getBase58Decoder().decode(tx.signatures[message.staticAccounts[0]!]!);
}

/** A JSON-RPC request, or the error a node answers for anything else. */
function parse(body: string): { id: unknown; method: string; params?: unknown[] } {
  let request: unknown;
  try {
    request = JSON.parse(body);
  } catch {
    throw new RpcError(-32700, 'Parse error');
  }
  if (
    !request ||
    typeof request !== 'object' ||
    typeof (request as { method?: unknown }).method !== 'string'
  ) {
    throw new RpcError(-32600, 'Invalid request');
  }
  return request as { id: unknown; method: string; params?: unknown[] };
}

function readU64(data: Uint8Array, offset: number): bigint {
  return Buffer.from(data.subarray(offset, offset + 8)).readBigUInt64LE();
}

/** JSON with bigints as plain numbers, as a node writes u64s. */
function toJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? `\u0000${v}` : v)).replace(
    /"\\u0000(\d+)"/g,
    '$1',
  );
}

/** A key pair from 32 random bytes, with the bytes (the form `chains add --faucet-key` takes). */
export async function randomSigner(): Promise<{ signer: KeyPairSigner; secret: Uint8Array }> {
  const secret = new Uint8Array(randomBytes(32));
  return { signer: await createKeyPairSignerFromPrivateKeyBytes(secret), secret };
}

/**
 * A test USDT on `node`: a mint at `decimals`, `supply` units minted into `holder`'s associated token
 * account, SOL for fees airdropped to the holder. Returns the mint's address.
 */
export async function mintTestToken(
  node: LocalSolanaNode,
  holder: KeyPairSigner,
  decimals: number,
  supply: bigint,
): Promise<string> {
  node.svm.airdrop(holder.address, lamports(100_000_000_000n));
  const mint = (await randomSigner()).signer;
  const space = BigInt(getMintSize());
  await node.send(holder, [
    getCreateAccountInstruction({
      payer: holder,
      newAccount: mint,
      lamports: node.svm.minimumBalanceForRentExemption(space),
      space,
      programAddress: TOKEN_PROGRAM_ADDRESS,
    }),
    getInitializeMint2Instruction({ mint: mint.address, decimals, mintAuthority: holder.address }),
  ]);
  const account = await associatedTokenAccount(holder.address, mint.address);
  await node.send(holder, [
    createAssociatedTokenAccountIdempotent(holder, account, holder.address, mint.address),
    getMintToCheckedInstruction({
      mint: mint.address,
      token: account,
      mintAuthority: holder,
      amount: supply,
      decimals,
    }),
  ]);
  return mint.address;
}

export interface LocalSolanaSetUp {
  chainNodeId: string;
  rpcUrl: string;
  confirmations: number;
  /** The test USDT's mint. */
  mint: string;
  faucet: boolean;
}

/**
 * Registers a fresh local Solana node for test mode: a test USDT at the catalogue's decimals minted to a
 * new faucet, which pays test deposits. Its ledger lives only as long as the process, so a node earlier
 * registered at the same URL is retired (nothing can arrive on it now). A test-mode SOLANA node of your
 * own (`chains add`) elsewhere is kept, and this one runs unused.
 */
export async function setUpLocalSolana(
  db: Db,
  masterKey: string,
  node: LocalSolanaNode,
  confirmations: number,
): Promise<LocalSolanaSetUp> {
  const existing = await activeChainNode(db, masterKey, 'test', 'SOLANA');
  // A node elsewhere that answers is one you registered (`chains add`); one that does not is a dead one
  // (an earlier run's, on another port), retired below like the last run's at this URL.
  const answers = async (url: string) =>
    solanaRpc(url)
      .getGenesisHash()
      .send()
      .then(
        () => true,
        () => false,
      );
  if (existing && existing.rpcUrl !== node.url && (await answers(existing.rpcUrl))) {
    return {
      chainNodeId: existing.id,
      rpcUrl: existing.rpcUrl,
      confirmations: existing.confirmations,
      mint: existing.tokens.USDT ?? '',
      faucet: existing.faucetKey !== undefined,
    };
  }
  await retireChainNodesAt(db, node.url);
  if (existing && existing.rpcUrl !== node.url) await retireChainNodesAt(db, existing.rpcUrl);
  const asset = await findCryptoAsset(db, 'USDT', 'SOLANA');
  if (!asset) throw new Error('the catalogue has no USDT on SOLANA');
  const faucet = await randomSigner();
  const mint = await mintTestToken(
    node,
    faucet.signer,
    asset.decimals,
    1_000_000_000n * 10n ** BigInt(asset.decimals),
  );
  const { id, treasury } = await addChainNode(db, masterKey, {
    mode: 'test',
    network: 'SOLANA',
    rpcUrl: node.url,
    confirmations,
    tokens: { USDT: mint },
    faucetKey: Buffer.from(faucet.secret).toString('hex'),
  });
  await fundTreasury(
    node,
    faucet.signer,
    mint,
    treasury!,
    1_000_000n * 10n ** BigInt(asset.decimals),
    asset.decimals,
  );
  return { chainNodeId: id, rpcUrl: node.url, confirmations, mint, faucet: true };
}

/**
 * Funds a node's treasury as ops would: SOL for the fees of its sends and the rent of the token accounts
 * it opens, and `units` of `mint` from `holder` for on-ramp sends.
 */
export async function fundTreasury(
  node: LocalSolanaNode,
  holder: KeyPairSigner,
  mint: string,
  treasury: string,
  units: bigint,
  decimals: number,
): Promise<void> {
  node.svm.airdrop(address(treasury), lamports(100_000_000_000n));
  await node.send(
    holder,
    await tokenPayment(holder, holder, holder.address, treasury, mint, units, decimals),
  );
}

/** `paceChain` for the local Solana node: a block a tick while a transaction lacks its depth. */
export function paceSolanaBlocks(
  node: LocalSolanaNode,
  options: { depth: number; intervalMs: number },
): { stop(): void } {
  return paceChain(
    {
      head: async () => Number(node.head()),
      busy: async (slot) => node.busy(BigInt(slot)),
      mine: async () => node.mine(1),
    },
    options,
  );
}
