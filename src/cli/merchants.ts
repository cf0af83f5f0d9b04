import { parseArgs } from 'node:util';
import { createMerchant, type WalletSpec } from '../merchants/accounts';
import { rotateMerchantKeys } from '../merchants/keys';
import { isFiatCurrency } from '../lib/currencies';
import { SANDBOX_TERMINALS } from '../sandbox/tables';
import { settingsCommand } from './settlement';
import type { Command } from './context';
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

export const commands: Record<string, Command> = {
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
    try {
      ctx.print(
        await rotateMerchantKeys(ctx.database.db, ctx.config.MASTER_KEY, values.merchant, overlap),
        values.json ?? false,
      );
    } catch (error) {
      if (error instanceof Error && /not found/.test(error.message)) throw new CliError(error.message);
      throw error;
    }
  },
  settings: settingsCommand,
};
