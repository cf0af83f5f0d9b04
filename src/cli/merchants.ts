import { parseArgs } from 'node:util';
import { createMerchant, merchantExists, type WalletSpec } from '../merchants/accounts';
import { rotateMerchantKeys, rotateWebhookSecret } from '../merchants/keys';
import { isFiatCurrency } from '../lib/currencies';
import { SANDBOX_TERMINALS } from '../schemas/sandbox-cards';
import { settingsCommand } from './settlement';
import { listFees, setFee } from '../merchants/fees';
import { isMode, isTransactionKind, TRANSACTION_KINDS } from '../lib/vocabulary';
import type { CliContext, Command } from './context';
import { CliError } from './errors';

function parseWallet(spec: string): WalletSpec {
  const match = /^([A-Za-z]{3}):(\d{1,15})$/.exec(spec);
  if (!match || !isFiatCurrency(match[1]!.toUpperCase())) {
    throw new CliError(
      `--wallet must be CUR:AMOUNT with an ISO 4217 currency and minor units, got "${spec}"`,
    );
  }
  return { currency: match[1]!.toUpperCase(), amount: BigInt(match[2]!) };
}

/**
 * `merchants fees --merchant ID [--mode M --kind K --currency CUR --percent P --fixed MINOR] [--json]`:
 * sets one line of the fee schedule when given one, then prints the schedule.
 */
const feesCommand: Command = async (ctx, argv) => {
  const { values } = parseArgs({
    args: argv,
    options: {
      merchant: { type: 'string' },
      mode: { type: 'string' },
      kind: { type: 'string' },
      currency: { type: 'string' },
      percent: { type: 'string' },
      fixed: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  if (!values.merchant) throw new CliError('--merchant is required');
  if (!(await merchantExists(ctx.database.db, values.merchant)))
    throw new CliError(`Merchant ${values.merchant} not found.`);
  const setting = [values.mode, values.kind, values.currency, values.percent, values.fixed];
  if (setting.some((v) => v !== undefined)) {
    if (!values.mode || !isMode(values.mode)) throw new CliError('--mode must be test or live');
    if (!values.kind || !isTransactionKind(values.kind))
      throw new CliError(`--kind must be one of ${TRANSACTION_KINDS.join(', ')}`);
    const currency = values.currency?.toUpperCase() ?? '';
    if (!currency) throw new CliError('--currency is required to set a fee');
    if (!isFiatCurrency(currency)) throw new CliError('--currency must be an ISO 4217 currency');
    const { percent, fixed } = values;
    if (percent === undefined && fixed === undefined) throw new CliError('give --percent, --fixed or both');
    if (
      percent !== undefined &&
      (!/^\d{1,3}(\.\d{1,4})?$/.test(percent) || Number(percent.split('.')[0]) > 100)
    )
      throw new CliError('--percent must be a number from 0 to 100 with at most 4 decimals');
    if (fixed !== undefined && !/^\d{1,15}$/.test(fixed))
      throw new CliError('--fixed must be a whole number of minor units');
    await setFee(ctx.database.db, {
      merchantId: values.merchant,
      mode: values.mode,
      kind: values.kind,
      currency,
      ...(percent === undefined ? {} : { percent }),
      ...(fixed === undefined ? {} : { fixedMinor: BigInt(fixed) }),
    });
  }
  const schedule = await listFees(ctx.database.db, values.merchant);
  ctx.print(schedule, values.json ?? false);
};

/** A rotation's `--merchant` and `--overlap-hours` (the configured overlap when left out), checked. */
function rotationArgs(ctx: CliContext, argv: string[]) {
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
    values['overlap-hours'] === undefined
      ? ctx.config.KEY_ROTATION_OVERLAP_HOURS
      : Number(values['overlap-hours']);
  if (!Number.isInteger(overlap) || overlap < 0)
    throw new CliError('--overlap-hours must be a whole number of hours');
  return { merchant: values.merchant, overlap, json: values.json ?? false };
}

/** A rotation of a merchant that does not exist, told as a CLI error. */
async function orNotFound<T>(rotate: () => Promise<T>): Promise<T> {
  try {
    return await rotate();
  } catch (error) {
    if (error instanceof Error && /not found/.test(error.message)) throw new CliError(error.message);
    throw error;
  }
}

export const commands: Record<string, Command> = {
  fees: feesCommand,
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
    const credentials = await createMerchant(ctx.database.db, ctx.config.MASTER_KEY, {
      name: values.name,
      wallets: (values.wallet ?? []).map(parseWallet),
      terminals: SANDBOX_TERMINALS,
      liveSandbox: ctx.config.ALLOW_SANDBOX_IN_LIVE,
    });
    ctx.print(credentials, values.json ?? false);
  },
  async 'rotate-keys'(ctx, argv) {
    const { merchant, overlap, json } = rotationArgs(ctx, argv);
    ctx.print(
      await orNotFound(() => rotateMerchantKeys(ctx.database.db, ctx.config.MASTER_KEY, merchant, overlap)),
      json,
    );
  },
  async 'rotate-webhook-secret'(ctx, argv) {
    const { merchant, overlap, json } = rotationArgs(ctx, argv);
    ctx.print(
      await orNotFound(() => rotateWebhookSecret(ctx.database.db, ctx.config.MASTER_KEY, merchant, overlap)),
      json,
    );
  },
  settings: settingsCommand,
};
