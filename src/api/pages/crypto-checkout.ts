import type { FastifyInstance } from 'fastify';
import { registerDecisionPage } from './decision-page';
import {
  expiredPage,
  finalStatePage,
  formErrorPage,
  limitPageRate,
  merchantReturnUrl,
  notFoundPage,
  verifyCsrf,
} from './hosted';
import { escapeHtml } from './layout';
import { decimalAmount } from '../../schemas/fields';
import { formatUnits, parseUnits } from '../../lib/units';
import type { PageDeps } from '../deps';
import type { TransactionRow } from '../../transactions/view';

const detail = (row: TransactionRow, key: string): string => {
  const value = row.details[key];
  return value === undefined || value === null ? '' : String(value);
};

const isOnramp = (row: TransactionRow) => row.kind === 'ramp' && row.details.transaction_type === 'ONRAMP';

/** The crypto amount not received yet (the whole amount once it is all in): the test form's default. */
function stillOwed(row: TransactionRow): string {
  const scale = 18;
  const due = parseUnits(detail(row, 'crypto_amount') || '0', scale) ?? 0n;
  const paid = parseUnits(detail(row, 'crypto_paid_amount') || '0', scale) ?? 0n;
  return formatUnits(due > paid ? due - paid : due, scale);
}

/** What the customer must send, and what has arrived: OFFRAMP and payin deposits. */
function depositPage(row: TransactionRow, form: { csrf: string; path: string }) {
  const code = detail(row, row.kind === 'ramp' ? 'crypto' : 'crypto_currency');
  const rows: [string, string][] = [
    ['Send exactly', `${detail(row, 'crypto_amount')} ${code}`],
    ['Network', detail(row, 'crypto_network')],
    ['Deposit address', detail(row, 'deposit_address')],
    ['Received so far', `${detail(row, 'crypto_paid_amount') || '0'} ${code}`],
    [
      'Pay before',
      detail(row, 'expires_at')
        .replace('T', ' ')
        .replace(/\.\d+Z$/, ' UTC'),
    ],
  ];
  const simulate =
    row.mode === 'test'
      ? `<form method="post" action="${escapeHtml(form.path)}/deposit">
<input type="hidden" name="csrf" value="${escapeHtml(form.csrf)}">
<label for="amount">Test mode: deposit</label>
<input id="amount" name="amount" inputmode="decimal" value="${escapeHtml(stillOwed(row))}">
<div class="actions"><button class="neutral" type="submit">Send test deposit</button></div>
</form>
<p class="note">On a watched chain a test deposit is a real transfer from the test faucet; it counts once
it has its confirmations.</p>`
      : '';
  return {
    refreshSeconds: 10,
    body: `<h1>Send your crypto</h1>
<dl>
${rows.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`).join('\n')}
</dl>
${simulate}
<p class="note">Pay from a wallet of your own, not from an exchange account: anything sent back (an excess,
a late or failed payment) goes to the address that paid.</p>
<p class="note">This page refreshes by itself as deposits arrive.</p>`,
  };
}

/** The crypto checkout: ONRAMP fiat payment (sandbox approve/decline), or the deposit page. */
export async function cryptoCheckoutRoutes(app: FastifyInstance, deps: PageDeps): Promise<void> {
  registerDecisionPage(app, deps, {
    kinds: ['ramp', 'crypto_payin'],
    path: '/api/v1/:mode/crypto/checkout/:id',
    awaiting: 'REDIRECT',
    title: 'Crypto checkout',
    heading: 'Pay for your crypto',
    details: (row) => [
      ['You pay', `${detail(row, 'fiat_amount')} ${detail(row, 'fiat')}`],
      ['You receive', `${detail(row, 'crypto_amount')} ${detail(row, 'crypto')}`],
      ['Network', detail(row, 'crypto_network')],
      ['To wallet', detail(row, 'wallet_address')],
    ],
    approve: 'Pay',
    decline: 'Cancel',
    note: 'Sandbox payment: paying sends the crypto to your wallet, cancelling fails the transaction.',
    takesDecision: isOnramp,
    otherPage: depositPage,
  });

  app.post<{ Params: { mode: string; id: string }; Body: Record<string, string> }>(
    '/api/v1/:mode/crypto/checkout/:id/deposit',
    async (request, reply) => {
      await limitPageRate(deps, request);
      const { mode, id } = request.params;
      const row = await deps.services.findHostedTransaction(deps.db, mode, ['ramp', 'crypto_payin'], id);
      if (!row || row.mode !== 'test') return notFoundPage(reply);
      const form = request.body ?? {};
      if (!verifyCsrf(request, deps.masterKey, id, form.csrf)) return expiredPage(reply);
      const page = `/api/v1/${mode}/crypto/checkout/${id}`;
      const amount = decimalAmount('amount').safeParse(form.amount);
      if (!amount.success) return formErrorPage(reply, 'Enter an amount greater than 0, such as 12.5.', page);
      if (row.status === 'REDIRECT') {
        // On a watched chain the transfer is accounted after its confirmations; the page shows it then.
        const made = await deps.services.testDeposit(deps, row, { amount: amount.data });
        if (made.kind === 'refused') return formErrorPage(reply, made.message, page);
        if (made.kind === 'sandbox' && typeof made.outcome === 'object' && 'invalid' in made.outcome) {
          return formErrorPage(reply, made.outcome.invalid, page);
        }
      }
      const after = (await deps.services.findTransaction(deps.db, id)) ?? row;
      if (after.status === 'REDIRECT') return reply.redirect(`/api/v1/${mode}/crypto/checkout/${id}`, 303);
      const back = merchantReturnUrl(after);
      return back ? reply.redirect(back, 303) : finalStatePage(reply, after);
    },
  );
}
