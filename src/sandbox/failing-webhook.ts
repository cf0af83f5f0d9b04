import type { Db } from '../db/client';
import { opsRetried } from '../transactions/ops-audit';

/** Where the sandbox's rehearsal webhook endpoint answers (docs/sandbox.md, rehearsing a stuck payment). */
export const FAILING_WEBHOOK_PATH = '/api/v1/test/sandbox/failing-webhook';

/**
 * The rehearsal endpoint's answer to a webhook: it fails (503) every delivery of a transaction until ops
 * retry one (`npx payments ops retry`, or `retryNow` in the Temporal UI), then takes them (200).
 */
export async function failingWebhookTakes(db: Db, body: unknown): Promise<boolean> {
  const transactionId = (body as { data?: { transaction_id?: unknown } } | undefined)?.data?.transaction_id;
  return typeof transactionId === 'string' && (await opsRetried(db, transactionId));
}
