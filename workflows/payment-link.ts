import { allHandlersFinished, condition } from '@temporalio/workflow';
import { UpdateProofs, setInternalHandler } from './proofs';
import { expireLinkUpdate, linkUsedUpdate, type PaymentLinkInput } from '../src/contracts';
import { records } from './activities';
import { refusal } from './failures';

export const LINK_USED = 'This payment link has already been used.';
export const LINK_EXPIRED = 'This payment link has expired.';

/**
 * A payment link (docs/hosted.md): open until a customer pays through it, once, or until it expires. The
 * link page creates the transaction (its order id is the link's, so a link can only ever make one) and
 * tells this workflow, which projects the link as used; at `expiresAt` an unused link is projected as
 * expired and refuses every later use. In test mode the service may expire it before then (`expireLink`).
 */
export async function paymentLink(input: PaymentLinkInput): Promise<'used' | 'expired'> {
  let usedBy: string | undefined;
  let expired = false;
  let expireNow = false;
  let projected = false;
  const proofs = new UpdateProofs(input);
  setInternalHandler(
    proofs,
    linkUsedUpdate,
    async ({ transactionId }) => {
      if (usedBy === undefined) {
        usedBy = transactionId;
        await records.markLinkUsed({ linkId: input.linkId, transactionId });
      }
      return 'used' as const;
    },
    {
      description: 'the link page created the transaction paid through this link.',
      validator: ({ transactionId }) => {
        if (expired) throw refusal(LINK_EXPIRED);
        if (usedBy !== undefined && usedBy !== transactionId) throw refusal(LINK_USED);
      },
    },
  );
  setInternalHandler(
    proofs,
    expireLinkUpdate,
    async () => {
      expireNow = true;
      // A customer's use that came first wins: the link is then used, not expired.
      await condition(() => projected || usedBy !== undefined);
      return usedBy === undefined ? ('expired' as const) : ('used' as const);
    },
    {
      description: "test mode: the merchant's sandbox expires the unused link now.",
      validator: () => {
        if (usedBy !== undefined) throw refusal(LINK_USED);
      },
    },
  );
  await proofs.bound();
  const remaining = Date.parse(input.expiresAt) - Date.now();
  if (remaining > 0) await condition(() => usedBy !== undefined || expireNow, remaining);
  if (usedBy === undefined) {
    expired = true;
    await records.markLinkExpired({ linkId: input.linkId });
    projected = true;
  }
  await condition(allHandlersFinished);
  return usedBy === undefined ? 'expired' : 'used';
}
