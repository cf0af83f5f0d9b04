import { parseArgs } from 'node:util';
import { isHttpUrl } from '../lib/urls';
import { merchantExists } from '../merchants/accounts';
import { isMode } from '../lib/vocabulary';
import { addTemplate, listLinks, listTemplates } from '../transactions/links';
import type { Command } from './context';
import { CliError } from './errors';

/** The merchant and mode every templates command names; the merchant must exist. */
async function scopeOf(ctx: Parameters<Command>[0], values: { merchant?: string; mode?: string }) {
  if (!values.merchant) throw new CliError('--merchant is required');
  if (!values.mode || !isMode(values.mode)) throw new CliError('--mode must be test or live');
  if (!(await merchantExists(ctx.database.db, values.merchant)))
    throw new CliError(`Merchant ${values.merchant} not found.`);
  return { merchantId: values.merchant, mode: values.mode };
}

const urlOption = (name: string, value: string | undefined) => {
  if (value !== undefined && !isHttpUrl(value)) throw new CliError(`--${name} must be an http(s) URL`);
  return value;
};

export const commands: Record<string, Command> = {
  /** Adds a payment page template, which payment links are created on (docs/hosted.md). */
  async add(ctx, argv) {
    const { values } = parseArgs({
      args: argv,
      options: {
        merchant: { type: 'string' },
        mode: { type: 'string' },
        name: { type: 'string' },
        'redirect-url': { type: 'string' },
        'webhook-url': { type: 'string' },
        'screenshot-url': { type: 'string' },
        json: { type: 'boolean' },
      },
    });
    const scope = await scopeOf(ctx, values);
    const name = values.name?.trim();
    if (!name || name.length > 191) throw new CliError('--name is required (at most 191 characters)');
    const redirectUrl = urlOption('redirect-url', values['redirect-url']);
    if (!redirectUrl) throw new CliError('--redirect-url is required');
    const template = await addTemplate(ctx.database.db, {
      ...scope,
      name,
      redirectUrl,
      webhookUrl: urlOption('webhook-url', values['webhook-url']),
      screenshotUrl: urlOption('screenshot-url', values['screenshot-url']),
    });
    ctx.print(template, values.json ?? false);
  },

  /** The merchant's templates of a mode, as `GET /api/v1/payment-templates` shows them. */
  async list(ctx, argv) {
    const { values } = parseArgs({
      args: argv,
      options: { merchant: { type: 'string' }, mode: { type: 'string' }, json: { type: 'boolean' } },
    });
    ctx.print(await listTemplates(ctx.database.db, await scopeOf(ctx, values)), values.json ?? false);
  },

  /** The merchant's latest payment links of a mode: open, used (by which transaction) or expired. */
  async links(ctx, argv) {
    const { values } = parseArgs({
      args: argv,
      options: { merchant: { type: 'string' }, mode: { type: 'string' }, json: { type: 'boolean' } },
    });
    const scope = await scopeOf(ctx, values);
    const links = await listLinks(ctx.database.db, scope.merchantId, scope.mode);
    ctx.print(
      links.map((l) => ({
        link_id: l.id,
        kind: l.crypto ? l.crypto.transaction_type : 'card',
        status: l.status,
        transaction_id: l.transactionId,
        // Card links in minor units, as they were created; crypto links in their own terms (fiat or crypto).
        ...(l.crypto
          ? l.crypto.fiat_amount !== undefined
            ? { amount: l.crypto.fiat_amount, currency: l.crypto.fiat_currency }
            : { amount: l.crypto.crypto_amount, currency: l.crypto.crypto_currency }
          : { amount: l.amountMinor, currency: l.currency }),
        order_id: l.orderId,
        expires_at: l.expiresAt.toISOString(),
        payment_template_id: l.templateId,
      })),
      values.json ?? false,
    );
  },
};
