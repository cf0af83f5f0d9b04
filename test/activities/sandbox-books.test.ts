/**
 * The sandbox connectors' books against a test database: the first answer for a key is the one kept, and
 * an entry leaves a challenge or a verification once. Their statements are prepared (one round trip in the
 * common case), so each path is read back here, not only the first.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sandboxRecords } from '../../activities/connectors/sandbox-records';
import { databaseForFile } from '../helpers/env';

const db = databaseForFile(4);

const newKey = () => `tx_${randomBytes(6).toString('hex')}:auth:0`;

describe('the sandbox books', () => {
  it('keeps the first answer for a key: a repeat with another answer gets the first', async () => {
    const books = sandboxRecords(db().db, 'sandbox', 'authorization');
    const key = newKey();
    const first = await books.record(key, {
      state: 'approved',
      reference: 'ref-1',
      message: null,
      amountMinor: 1050n,
      currency: 'EUR',
    });
    expect(first).toMatchObject({
      state: 'approved',
      reference: 'ref-1',
      amountMinor: 1050n,
      currency: 'EUR',
    });
    const repeat = await books.record(key, { state: 'declined', reference: 'ref-2', message: 'No.' });
    expect(repeat).toMatchObject({
      state: 'approved',
      reference: 'ref-1',
      message: null,
      amountMinor: 1050n,
    });
    expect(await books.find(key)).toMatchObject({ state: 'approved', reference: 'ref-1' });
  });

  it('gives concurrent requests for one key the same answer', async () => {
    const books = sandboxRecords(db().db, 'sandbox', 'payout');
    const key = newKey();
    const answers = await Promise.all(
      ['a', 'b', 'c', 'd'].map((reference) =>
        books.record(key, { state: 'paid', reference, message: null, amountMinor: 1n, currency: 'USD' }),
      ),
    );
    expect(new Set(answers.map((answer) => answer.reference)).size).toBe(1);
  });

  it('records what the request names: its transaction, connector and operation, an absent amount as none', async () => {
    const books = sandboxRecords(db().db, 'sandbox-eu', 'refund');
    const key = newKey();
    const row = await books.record(key, { state: 'refunded', reference: 'r', message: 'Done.' });
    expect(row).toMatchObject({
      idempotencyKey: key,
      transactionId: key.split(':')[0],
      connector: 'sandbox-eu',
      operation: 'refund',
      message: 'Done.',
      amountMinor: null,
      currency: null,
    });
  });

  it('moves an entry out of a challenge once; a later move finds the first', async () => {
    const books = sandboxRecords(db().db, 'sandbox', 'authorization');
    const key = newKey();
    await books.record(key, { state: 'challenge', reference: 'ref', message: null });
    const approved = await books.settle(key, 'challenge', { state: 'approved', message: null });
    expect(approved).toMatchObject({ state: 'approved', reference: 'ref' });
    const late = await books.settle(key, 'challenge', {
      state: 'declined',
      message: '3DS authentication failed.',
    });
    expect(late).toMatchObject({ state: 'approved', message: null });
    expect(await books.settle(newKey(), 'challenge', { state: 'approved', message: null })).toBeUndefined();
  });
});
