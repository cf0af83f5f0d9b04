import { parseArgs } from 'node:util';
import { createDatabase, runMigrations, type Database } from '../db/client';
import { loadConfig } from '../config';
import { readDevInstance } from '../dev/state';
import {
  addTerminal,
  createMerchant,
  rotateMerchantKeys,
  SANDBOX_TERMINALS,
  type WalletSpec,
} from '../merchants/accounts';
import { TRANSACTION_KINDS } from '../lib/vocabulary';
import { creditWallet } from '../wallets/ledger';
import { newId } from '../ciphers/ids';
import { isFiatCurrency } from '../lib/currencies';
import { commands as webhookCommands } from './webhooks';
import { commands as walletCommands } from './wallets';
import { settingsCommand } from './settlement';

import { CliError } from './errors';

export { CliError };

export interface CliContext {
  env: NodeJS.ProcessEnv;
  database: Database;
  masterKey: string;
  keyRotationOverlapHours: number;
  temporal: () => Promise<import('@temporalio/client').Client>;
  print(value: unknown, json: boolean): void;
}

export type Command = (ctx: CliContext, argv: string[]) => Promise<void>;

const USAGE = `Usage: payments <command>

  merchants create --name NAME [--wallet CUR:AMOUNT]... [--json]
  merchants rotate-keys --merchant ID [--overlap-hours N] [--json]
  merchants settings --merchant ID [--tolerance CUR:AMOUNT]... [--tolerance-fiat AMOUNT|none]
                     [--underpaid fail|accept] [--overpaid keep|refund] [--json]
  terminals add --merchant ID --mode test|live --kind KIND [--connector NAME] [--priority N] [--descriptor TEXT]
  wallets credit --wallet ID --amount MINOR [--reference REF]
  wallets statement WALLET_ID [--json]
  webhooks redeliver TRANSACTION_ID|EVENT_ID
  db migrate

Talks to DATABASE_URL (with MASTER_KEY), or to the running \`npm run dev\` instance when unset.`;

function parseWallet(spec: string): WalletSpec {
  const match = /^([A-Za-z]{3}):(\d{1,15})$/.exec(spec);
  if (!match || !isFiatCurrency(match[1]!.toUpperCase())) {
    throw new CliError(
      `--wallet must be CUR:AMOUNT with an ISO 4217 currency and minor units, got "${spec}"`,
    );
  }
  return { currency: match[1]!.toUpperCase(), amount: BigInt(match[2]!) };
}

const merchantCommands: Record<string, Command> = {
  async create(ctx, argv) {
    const { values } = parseArgs({
      args: argv,
      options: {
        name: { type: 'string' },
        wallet: { type: 'string', multiple: true },
        json: { type: 'boolean' },
      },
    });
    if (!values.name) throw new CliError('--name is required');
    const credentials = await createMerchant(ctx.database.db, ctx.masterKey, {
      name: values.name,
      wallets: (values.wallet ?? []).map(parseWallet),
      terminals: SANDBOX_TERMINALS,
    });
    ctx.print(credentials, values.json ?? false);
  },
  async 'rotate-keys'(ctx, argv) {
    const { values } = parseArgs({
      args: argv,
      options: {
        merchant: { type: 'string' },
        'overlap-hours': { type: 'string' },
        json: { type: 'boolean' },
      },
    });
    if (!values.merchant) throw new CliError('--merchant is required');
    const overlap =
      values['overlap-hours'] === undefined ? ctx.keyRotationOverlapHours : Number(values['overlap-hours']);
    if (!Number.isInteger(overlap) || overlap < 0)
      throw new CliError('--overlap-hours must be a whole number of hours');
    try {
      ctx.print(
        await rotateMerchantKeys(ctx.database.db, ctx.masterKey, values.merchant, overlap),
        values.json ?? false,
      );
    } catch (error) {
      if (error instanceof Error && /not found/.test(error.message)) throw new CliError(error.message);
      throw error;
    }
  },
};

const terminalCommands: Record<string, Command> = {
  async add(ctx, argv) {
    const { values } = parseArgs({
      args: argv,
      options: {
        merchant: { type: 'string' },
        mode: { type: 'string' },
        kind: { type: 'string', multiple: true },
        connector: { type: 'string' },
        priority: { type: 'string' },
        descriptor: { type: 'string' },
        json: { type: 'boolean' },
      },
    });
    if (!values.merchant) throw new CliError('--merchant is required');
    if (values.mode !== 'test' && values.mode !== 'live') throw new CliError('--mode must be test or live');
    const kinds = values.kind ?? [];
    if (kinds.length === 0 || !kinds.every((k) => (TRANSACTION_KINDS as readonly string[]).includes(k))) {
      throw new CliError(`--kind must be one of ${TRANSACTION_KINDS.join(', ')}`);
    }
    const priority = Number(values.priority ?? 100);
    if (!Number.isInteger(priority)) throw new CliError('--priority must be a whole number');
    const connector =
      values.connector ??
      SANDBOX_TERMINALS.find((t) => t.kinds.includes(kinds[0]!))?.connector ??
      'sandbox-acquirer';
    try {
      const result = await addTerminal(ctx.database.db, values.merchant, values.mode, {
        connector,
        kinds,
        priority,
        descriptor: values.descriptor ?? null,
      });
      ctx.print(result, values.json ?? false);
    } catch (error) {
      if (
        error instanceof Error &&
        /foreign key/.test(String((error as { cause?: unknown }).cause ?? error.message))
      ) {
        throw new CliError(`Merchant ${values.merchant} not found.`);
      }
      throw error;
    }
  },
};

const walletCreditCommand: Command = async (ctx, argv) => {
  const { values } = parseArgs({
    args: argv,
    options: {
      wallet: { type: 'string' },
      amount: { type: 'string' },
      reference: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  if (!values.wallet) throw new CliError('--wallet is required');
  if (!values.amount || !/^\d{1,15}$/.test(values.amount) || BigInt(values.amount) <= 0n) {
    throw new CliError('--amount must be a positive whole number of minor units');
  }
  const reference = values.reference ?? newId('credit');
  try {
    const result = await creditWallet(ctx.database.db, values.wallet, reference, BigInt(values.amount));
    ctx.print({ wallet_id: values.wallet, reference, result }, values.json ?? false);
  } catch (error) {
    if (/foreign key/.test(String((error as { cause?: unknown }).cause ?? ''))) {
      throw new CliError(`Wallet ${values.wallet} not found.`);
    }
    throw error;
  }
};

const groups: Record<string, Record<string, Command>> = {
  merchants: { ...merchantCommands, settings: settingsCommand },
  terminals: terminalCommands,
  wallets: { credit: walletCreditCommand, ...walletCommands },
  webhooks: webhookCommands,
  db: {
    async migrate(ctx) {
      await runMigrations(ctx.database.pool);
      ctx.print({ migrated: true }, false);
    },
  },
};

function connectionSettings(env: NodeJS.ProcessEnv) {
  if (env.DATABASE_URL) {
    if (!env.MASTER_KEY) throw new CliError('MASTER_KEY is required with DATABASE_URL');
    return {
      databaseUrl: env.DATABASE_URL,
      masterKey: env.MASTER_KEY,
      temporalAddress: env.TEMPORAL_ADDRESS,
    };
  }
  const instance = readDevInstance();
  if (!instance) throw new CliError('DATABASE_URL is not set and no `npm run dev` instance is running.');
  return {
    databaseUrl: instance.database_url,
    masterKey: instance.master_key,
    temporalAddress: instance.temporal_address,
  };
}

function print(value: unknown, json: boolean): void {
  const text = JSON.stringify(
    value,
    (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v),
    json ? 0 : 2,
  );
  process.stdout.write(`${text}\n`);
}

export async function runCli(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [group, name, ...rest] = argv;
  const command = group ? groups[group]?.[name ?? ''] : undefined;
  if (!command) {
    process.stderr.write(`${USAGE}\n`);
    return group === undefined || group === '--help' ? 0 : 1;
  }
  let database: Database | undefined;
  try {
    const settings = connectionSettings(env);
    database = createDatabase(settings.databaseUrl, 2);
    const overlap = Number(env.KEY_ROTATION_OVERLAP_HOURS ?? 24);
    let client: import('@temporalio/client').Client | undefined;
    const ctx: CliContext = {
      env,
      database,
      masterKey: settings.masterKey,
      keyRotationOverlapHours: overlap,
      temporal: async () => {
        if (client) return client;
        const { createTemporalClient } = await import('../temporal/client');
        const payloadKeys = env.PAYLOAD_KEYS ?? (await import('../dev/state')).devSecrets().payload_keys;
        client = await createTemporalClient(
          loadConfig({
            ...env,
            DATABASE_URL: settings.databaseUrl,
            MASTER_KEY: settings.masterKey,
            PAYLOAD_KEYS: payloadKeys,
            TEMPORAL_ADDRESS: settings.temporalAddress ?? env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
          }),
        );
        return client;
      },
      print,
    };
    await command(ctx, rest);
    await client?.connection.close();
    return 0;
  } catch (error) {
    if (
      error instanceof CliError ||
      (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'))
    ) {
      process.stderr.write(`error: ${error.message}\n`);
      return 1;
    }
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await database?.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  void runCli(process.argv.slice(2)).then((code) => process.exit(code));
}
