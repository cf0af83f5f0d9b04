import { parseArgs } from 'node:util';
import type { Command } from './context';
import { CliError } from './errors';
import {
  changeSettlementSettings,
  readSettlementSettings,
  SettingsError,
  type SettlementChange,
} from '../merchants/settlement-settings';

const POLICIES = { underpaid: ['fail', 'accept'], overpaid: ['keep', 'refund'] } as const;

/**
 * `merchants settings`: shows a merchant's crypto settlement settings, or changes them. `--tolerance
 * USDT:0.5` (repeatable) sets a tolerance in that currency's units and replaces the per-currency list;
 * `--tolerance none` clears it; `--tolerance-fiat 0.50|none` sets one fiat amount for every asset.
 */
export const settingsCommand: Command = async (ctx, argv) => {
  const { values } = parseArgs({
    args: argv,
    options: {
      merchant: { type: 'string' },
      tolerance: { type: 'string', multiple: true },
      'tolerance-fiat': { type: 'string' },
      underpaid: { type: 'string' },
      overpaid: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  if (!values.merchant) throw new CliError('--merchant is required');
  const change: SettlementChange = {};
  if (values.tolerance) {
    const specs = values.tolerance.filter((t) => t !== 'none');
    change.tolerances = Object.fromEntries(
      specs.map((spec) => {
        const match = /^([A-Za-z0-9]{2,10}):(.+)$/.exec(spec);
        if (!match) throw new CliError(`--tolerance must be CURRENCY:AMOUNT, got "${spec}"`);
        return [match[1]!, match[2]!];
      }),
    );
  }
  const fiat = values['tolerance-fiat'];
  if (fiat !== undefined) change.toleranceFiat = fiat === 'none' ? null : fiat;
  for (const key of ['underpaid', 'overpaid'] as const) {
    const value = values[key];
    if (value === undefined) continue;
    if (!(POLICIES[key] as readonly string[]).includes(value))
      throw new CliError(`--${key} must be ${POLICIES[key].join(' or ')}`);
    (change as Record<string, string>)[key] = value;
  }
  try {
    const settings =
      Object.keys(change).length === 0
        ? await readSettlementSettings(ctx.database.db, values.merchant)
        : await changeSettlementSettings(ctx.database.db, values.merchant, change);
    ctx.print(settings, values.json ?? false);
  } catch (error) {
    if (error instanceof SettingsError) throw new CliError(error.message);
    throw error;
  }
};
