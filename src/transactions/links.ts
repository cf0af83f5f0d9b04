import { and, desc, eq, sql } from 'drizzle-orm';
import type { Client } from '@temporalio/client';
import type { Db } from '../db/client';
import { paymentLinks, paymentTemplates, type CryptoLinkTerms } from '../db/schema/index';
import { resolveAsset } from './crypto-pricing';
import { networksOf } from '../crypto/catalogue';
import { newId } from '../ciphers/ids';
import { workflowIds, type Mode, type WorkflowSignatures } from '../contracts';
import { fieldError } from '../platform/errors';
import { checkTerminal } from './request';
import type { MerchantScope } from './deps';

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
export const LINK_MAX_DAYS = 90;

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
 * which keeps it open until it is used once or expires (docs/hosted.md).
 */
export async function createLink(
  deps: { db: Db; temporal: Client; taskQueue: string; baseUrl: string },
  merchant: MerchantScope,
  input: NewLink,
): Promise<string> {
  const [template] = await deps.db
    .select({ id: paymentTemplates.id })
    .from(paymentTemplates)
    .where(
      and(
        eq(paymentTemplates.id, input.payment_template_id),
        eq(paymentTemplates.merchantId, merchant.merchantId),
        eq(paymentTemplates.mode, merchant.mode),
      ),
    );
  if (!template) fieldError('payment_template_id', 'The selected payment template id is invalid.');
  const kind = input.crypto ? 'crypto' : 'card';
  if (input.crypto?.crypto_network)
    await resolveAsset(deps.db, input.crypto.crypto_currency, input.crypto.crypto_network);
  else if (input.crypto && (await networksOf(deps.db, input.crypto.crypto_currency)).length === 0)
    fieldError('crypto_currency', 'The selected crypto currency is not supported.');
  await checkTerminal(
    deps.db,
    merchant,
    !input.crypto ? 'card' : input.crypto.transaction_type === 'PAYIN' ? 'crypto_payin' : 'ramp',
    input.terminal_id,
  );
  const expiresAt = input.expiry_date ?? new Date(Date.now() + LINK_DEFAULT_DAYS * 86_400_000);
  const linkId = newId('lnk');
  await deps.db.insert(paymentLinks).values({
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
  });
  await deps.temporal.workflow.start<WorkflowSignatures['paymentLink']>('paymentLink', {
    workflowId: workflowIds.paymentLink(linkId),
    taskQueue: deps.taskQueue,
    args: [{ linkId, expiresAt: expiresAt.toISOString() }],
    staticSummary: `Payment link ${linkId} · ${merchant.mode}`,
  });
  return linkUrl(deps.baseUrl, merchant.mode, linkId);
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
