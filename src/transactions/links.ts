import { updateKeyOf } from '../ciphers/update-proof';
import { and, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { paymentLinks, paymentTemplates, transactions, type CryptoLinkTerms } from '../db/schema/index';
import { checkCryptoLimits, checkDecimals, checkLimits, pricedFiat, resolveAsset } from './crypto-pricing';
import { findWalletFor } from '../wallets/wallets';
import { networksOf } from '../coins/catalogue';
import { newId } from '../ciphers/ids';
import type { Client } from '@temporalio/client';
import { expireLinkUpdate, workflowIds, type Mode, type WorkflowSignatures } from '../contracts';
import { sendInternalUpdate } from '../temporal/client';
import { ApiError, fieldError } from '../platform/errors';
import { checkMerchantUrls, checkTerminal } from './request';
import type { MerchantScope, TransactionDeps } from './deps';

/** A payment page template as the vendor SDK's `PaymentLink.templates` shows it. */
export function templateView(row: typeof paymentTemplates.$inferSelect) {
  return {
    template_id: row.layout,
    template_name: row.name,
    payment_template_id: row.id,
    template_screenshot: row.screenshotUrl,
    redirect_url: row.redirectUrl,
    webhook_url: row.webhookUrl,
  };
}

/** The merchant's templates of the key's mode, oldest first. */
export async function listTemplates(db: Db, merchant: MerchantScope) {
  const rows = await db
    .select()
    .from(paymentTemplates)
    .where(
      and(eq(paymentTemplates.merchantId, merchant.merchantId), eq(paymentTemplates.mode, merchant.mode)),
    )
    .orderBy(paymentTemplates.createdAt, paymentTemplates.id);
  return rows.map(templateView);
}

/** Adds a template (`npx payments templates add`). */
export async function addTemplate(
  db: Db,
  template: {
    merchantId: string;
    mode: Mode;
    name: string;
    redirectUrl: string;
    webhookUrl?: string | undefined;
    screenshotUrl?: string | undefined;
  },
) {
  const [row] = await db
    .insert(paymentTemplates)
    .values({ id: newId('ptm'), ...template })
    .returning();
  return templateView(row!);
}

/** How long a link stays open unless `expiry_date` says otherwise, and the longest it may. */
export const LINK_DEFAULT_DAYS = 7;

export interface NewLink {
  payment_template_id: string;
  /** A crypto link's terms (`POST /api/v1/crypto/payment-link`); a card link has none. */
  crypto?: CryptoLinkTerms;
  amount?: bigint | undefined;
  currency?: string | undefined;
  expiry_date?: Date | undefined;
  terminal_id?: string | undefined;
  order_id?: string | undefined;
}

/** The link's page: where the customer opens it. */
export function linkUrl(baseUrl: string, mode: Mode, linkId: string): string {
  return `${baseUrl}/api/v1/${mode}/link/${linkId}`;
}

/**
 * Creates a payment link on one of the merchant's templates of the key's mode and starts its workflow,
 * which keeps it open until it is used once or expires (docs/hosted.md). What the customer cannot change
 * is checked now, as the create request will check it, so a link that could never be paid is refused
 * here rather than on the customer's page: the template's URLs, the terminal, the order id (unused by any
 * transaction or other link), and a crypto link's currencies, decimals, limits and wallet.
 */
export async function createLink(
  deps: TransactionDeps,
  merchant: MerchantScope,
  input: NewLink,
): Promise<string> {
  const { db } = deps;
  const [template] = await db
    .select()
    .from(paymentTemplates)
    .where(
      and(
        eq(paymentTemplates.id, input.payment_template_id),
        eq(paymentTemplates.merchantId, merchant.merchantId),
        eq(paymentTemplates.mode, merchant.mode),
      ),
    );
  if (!template) fieldError('payment_template_id', 'The selected payment template id is invalid.');
  await checkMerchantUrls(deps, merchant, {
    redirect_url: template.redirectUrl,
    ...(template.webhookUrl ? { webhook_url: template.webhookUrl } : {}),
  }).catch((error: unknown) => {
    if (error instanceof ApiError && error.code === 'VALIDATION')
      fieldError('payment_template_id', `The template cannot take payments: ${error.message}`);
    throw error;
  });
  const kind = input.crypto ? 'crypto' : 'card';
  if (input.crypto) await checkCryptoTerms(deps, merchant, input.crypto);
  await checkTerminal(
    db,
    merchant,
    !input.crypto ? 'card' : input.crypto.transaction_type === 'PAYIN' ? 'crypto_payin' : 'ramp',
    input.terminal_id,
  );
  if (input.order_id !== undefined && (await orderIdTaken(db, merchant, input.order_id)))
    throw new ApiError('ORDER_CONFLICT');
  const expiresAt = input.expiry_date ?? new Date(Date.now() + LINK_DEFAULT_DAYS * 86_400_000);
  const linkId = newId('lnk');
  const inserted = await db
    .insert(paymentLinks)
    .values({
      id: linkId,
      merchantId: merchant.merchantId,
      mode: merchant.mode,
      templateId: template.id,
      kind,
      crypto: input.crypto ?? null,
      amountMinor: input.amount ?? null,
      currency: input.currency ?? null,
      orderId: input.order_id ?? null,
      terminalId: input.terminal_id ?? null,
      expiresAt,
    })
    .onConflictDoNothing()
    .returning({ id: paymentLinks.id });
  // Two links created at once with one order id: the unique index lets one in.
  if (inserted.length === 0) throw new ApiError('ORDER_CONFLICT');
  await deps.temporal.workflow.start<WorkflowSignatures['paymentLink']>('paymentLink', {
    workflowId: workflowIds.paymentLink(linkId),
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    args: [{ linkId, expiresAt: expiresAt.toISOString(), updateKey: updateKeyOf(deps.config.MASTER_KEY) }],
    staticSummary: `Payment link ${linkId} · ${merchant.mode}`,
  });
  return linkUrl(deps.config.baseUrl, merchant.mode, linkId);
}

/** Whether a transaction or another link of the merchant and mode already has this order id. */
async function orderIdTaken(db: Db, merchant: MerchantScope, orderId: string): Promise<boolean> {
  const scope = (table: typeof transactions | typeof paymentLinks) =>
    and(eq(table.merchantId, merchant.merchantId), eq(table.mode, merchant.mode), eq(table.orderId, orderId));
  const [transaction] = await db
    .select({ id: transactions.id })
    .from(transactions)
    .where(scope(transactions));
  const [link] = await db.select({ id: paymentLinks.id }).from(paymentLinks).where(scope(paymentLinks));
  return transaction !== undefined || link !== undefined;
}

/**
 * A crypto link's terms, checked as the ramp or payin create will check them: the currencies, the amount's
 * decimals and limits (when the network is known: given, or the currency's only one), and for a payin the
 * wallet it will credit.
 */
async function checkCryptoTerms(deps: TransactionDeps, merchant: MerchantScope, terms: CryptoLinkTerms) {
  const networks = await networksOf(deps.db, terms.crypto_currency);
  if (networks.length === 0) fieldError('crypto_currency', 'The selected crypto currency is not supported.');
  const fiat = await pricedFiat(deps.rates, 'fiat_currency', terms.fiat_currency);
  const network = terms.crypto_network ?? (networks.length === 1 ? networks[0] : undefined);
  const asset = network ? await resolveAsset(deps.db, terms.crypto_currency, network) : undefined;
  if (terms.fiat_amount !== undefined) {
    checkDecimals('fiat_amount', terms.fiat_amount, fiat.decimals);
    if (asset) checkLimits('fiat_amount', terms.fiat_amount, terms.fiat_currency, asset);
  }
  if (terms.crypto_amount !== undefined && asset) {
    checkDecimals('crypto_amount', terms.crypto_amount, asset.decimals);
    await checkCryptoLimits(deps.rates, 'crypto_amount', terms.crypto_amount, asset, {
      ...fiat,
      currency: terms.fiat_currency,
    });
  }
  if (terms.transaction_type === 'PAYIN') {
    const wallet = await findWalletFor(deps.db, merchant, terms.fiat_currency);
    if (!wallet)
      fieldError(
        'fiat_currency',
        `There is no ${terms.fiat_currency} wallet to credit in ${merchant.mode} mode.`,
      );
    if (wallet.status !== 'Active')
      fieldError('fiat_currency', `The ${terms.fiat_currency} wallet to credit is inactive.`);
  }
}

/** A link with its template, by id and mode (the page's lookup). */
export async function findLink(db: Db, mode: string, linkId: string) {
  const [row] = await db
    .select({ link: paymentLinks, template: paymentTemplates })
    .from(paymentLinks)
    .innerJoin(paymentTemplates, eq(paymentTemplates.id, paymentLinks.templateId))
    .where(and(eq(paymentLinks.id, linkId), sql`${paymentLinks.mode} = ${mode}`));
  return row;
}

/** The merchant's links of the mode, newest first (the CLI's view of their state). */
export async function listLinks(db: Db, merchantId: string, mode: Mode) {
  return db
    .select()
    .from(paymentLinks)
    .where(and(eq(paymentLinks.merchantId, merchantId), eq(paymentLinks.mode, mode)))
    .orderBy(desc(paymentLinks.createdAt))
    .limit(100);
}

/**
 * The link expiry endpoint (test mode, docs/sandbox.md): expires an unused link now, as its `expiry_date`
 * would. A link already used, or closed, answers as it stands.
 */
export async function expireLink(
  deps: { db: Db; temporal: Client },
  merchant: MerchantScope,
  linkId: string,
): Promise<{ link_id: string; status: 'expired' | 'used' }> {
  const found = await findLink(deps.db, merchant.mode, linkId);
  if (!found || found.link.merchantId !== merchant.merchantId) throw new ApiError('LINK_NOT_FOUND');
  const outcome = await sendInternalUpdate(
    deps.temporal,
    workflowIds.paymentLink(linkId),
    expireLinkUpdate,
    {},
    found.link.runId,
  );
  if (outcome.kind === 'done') return { link_id: linkId, status: outcome.result };
  // Its workflow has ended: the link was used or has expired already.
  const [row] = await deps.db
    .select({ status: paymentLinks.status })
    .from(paymentLinks)
    .where(eq(paymentLinks.id, linkId));
  return {
    link_id: linkId,
    status: row?.status === 'used' || outcome.kind === 'refused' ? 'used' : 'expired',
  };
}
