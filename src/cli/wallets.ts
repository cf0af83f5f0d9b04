import { parseArgs } from 'node:util';
import { asc, eq } from 'drizzle-orm';
import { auditLog, ledgerEntries, wallets } from '../db/schema/index';
import { creditWallet } from '../wallets/ledger';
import { newId } from '../ciphers/ids';
import { actorOf, type Command } from './context';
import { CliError } from './errors';

const walletCreditCommand: Command = async (ctx, argv) => {
  const { values } = parseArgs({
    args: argv,
    options: {
      wallet: { type: 'string' },
      amount: { type: 'string' },
      reference: { type: 'string' },
      actor: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  if (!values.wallet) throw new CliError('--wallet is required');
  const walletId = values.wallet;
  if (!values.amount || !/^\d{1,15}$/.test(values.amount) || BigInt(values.amount) <= 0n) {
    throw new CliError('--amount must be a positive whole number of minor units');
  }
  const reference = values.reference ?? newId('credit');
  const amount = BigInt(values.amount);
  // The credit and its audit row together: reconciliation takes a credit without one for a hand edit.
  const result = await ctx.database.db.transaction(async (tx) => {
    const [wallet] = await tx
      .select({ merchantId: wallets.merchantId })
      .from(wallets)
      .where(eq(wallets.id, walletId));
    if (!wallet) throw new CliError(`Wallet ${walletId} not found.`);
    const credited = await creditWallet(tx, walletId, reference, amount);
    if (credited === 'applied')
      await tx.insert(auditLog).values({
        merchantId: wallet.merchantId,
        action: 'wallet.credit',
        details: { walletId, reference, amount: amount.toString(), actor: actorOf(values.actor) },
      });
    return credited;
  });
  ctx.print({ wallet_id: walletId, reference, result }, values.json ?? false);
};

export const commands: Record<string, Command> = {
  credit: walletCreditCommand,
  /** Prints a wallet's ledger entries and the balance they add up to. */
  async statement(ctx, argv) {
    const walletId = argv.find((a) => !a.startsWith('--'));
    const json = argv.includes('--json');
    if (!walletId) throw new CliError('usage: wallets statement WALLET_ID [--json]');
    const [wallet] = await ctx.database.db.select().from(wallets).where(eq(wallets.id, walletId));
    if (!wallet) throw new CliError(`Wallet ${walletId} not found.`);
    const entries = await ctx.database.db
      .select()
      .from(ledgerEntries)
      .where(eq(ledgerEntries.walletId, walletId))
      .orderBy(asc(ledgerEntries.id));
    const total = entries.reduce((sum, e) => sum + e.amount, 0n);
    const statement = {
      wallet_id: wallet.id,
      mode: wallet.mode,
      currency: wallet.currency,
      entries: entries.map((e) => ({
        at: e.createdAt.toISOString(),
        reference: e.reference,
        step: e.step,
        amount: e.amount.toString(),
      })),
      ledger_total: total.toString(),
      available: wallet.available.toString(),
    };
    if (json) return ctx.print(statement, true);
    const lines = [`Wallet ${wallet.id} (${wallet.mode}, ${wallet.currency})`];
    for (const e of statement.entries)
      lines.push(`  ${e.at}  ${e.step.padEnd(8)} ${e.amount.padStart(16)}  ${e.reference}`);
    lines.push(`  ledger total: ${statement.ledger_total}   available: ${statement.available}`);
    process.stdout.write(`${lines.join('\n')}\n`);
  },
};
