import { parseArgs } from 'node:util';
import { addTerminal } from '../merchants/terminals';
import { isMode, isTransactionKind, TRANSACTION_KINDS } from '../lib/vocabulary';
import { isSandboxConnector, SANDBOX_TERMINALS } from '../schemas/sandbox-cards';
import type { Command } from './context';
import { CliError } from './errors';

export const commands: Record<string, Command> = {
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
        'secret-key': { type: 'string' },
        json: { type: 'boolean' },
      },
    });
    if (!values.merchant) throw new CliError('--merchant is required');
    if (!isMode(values.mode)) throw new CliError('--mode must be test or live');
    const kinds = values.kind ?? [];
    if (kinds.length === 0 || !kinds.every(isTransactionKind)) {
      throw new CliError(`--kind must be one of ${TRANSACTION_KINDS.join(', ')}`);
    }
    const priority = Number(values.priority ?? 100);
    if (!Number.isInteger(priority)) throw new CliError('--priority must be a whole number');
    const connector =
      values.connector ??
      SANDBOX_TERMINALS.find((t) => t.kinds.includes(kinds[0]!))?.connector ??
      'sandbox-acquirer';
    if (values.mode === 'live' && isSandboxConnector(connector) && !ctx.config.ALLOW_SANDBOX_IN_LIVE) {
      throw new CliError(
        `${connector} is a sandbox connector (it approves any card and moves no money): a live terminal may use it only with ALLOW_SANDBOX_IN_LIVE=true`,
      );
    }
    const secretKey = values['secret-key'];
    if (connector === 'stripe') {
      const expected = values.mode === 'live' ? /^(sk|rk)_live_[A-Za-z0-9]+$/ : /^(sk|rk)_test_[A-Za-z0-9]+$/;
      if (!secretKey || !expected.test(secretKey)) {
        throw new CliError(
          `--secret-key is required for stripe: a ${values.mode === 'live' ? 'sk_live_' : 'sk_test_'}… key of the Stripe account`,
        );
      }
    } else if (secretKey !== undefined) {
      throw new CliError(`--secret-key is for the stripe connector, not ${connector}`);
    }
    try {
      const result = await addTerminal(
        ctx.database.db,
        values.merchant,
        values.mode,
        { connector, kinds, priority, descriptor: values.descriptor ?? null },
        secretKey ? { masterKey: ctx.config.MASTER_KEY, credentials: { secret_key: secretKey } } : undefined,
      );
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
