import { timingSafeEqual } from 'node:crypto';
import { keyedDigest } from '../ciphers/secrets';
import type { Mode } from '../lib/vocabulary';

/**
 * Where a page ends: a row's creation time, as text Postgres reads back exactly (to the microsecond), and
 * its id.
 */
export interface Cursor {
  at: string;
  id: string;
}

/** Whose list a cursor belongs to: it is valid for that merchant, mode and list only. */
export interface CursorScope {
  list: string;
  merchantId: string;
  mode: Mode;
}

const mac = (masterKey: string, scope: CursorScope, payload: string) =>
  keyedDigest(`${scope.list}|${scope.merchantId}|${scope.mode}|${payload}`, masterKey, 'list-cursor').slice(
    0,
    32,
  );

/**
 * An opaque cursor: the position, base64url, and a MAC over it and its scope under a key derived from the
 * master key. It cannot be forged, and one merchant's cursor is worthless to another.
 */
export function encodeCursor(masterKey: string, scope: CursorScope, cursor: Cursor): string {
  const payload = Buffer.from(JSON.stringify([cursor.at, cursor.id])).toString('base64url');
  return `${payload}.${mac(masterKey, scope, payload)}`;
}

/** The position a cursor holds, or undefined when it is not one this scope issued. */
export function decodeCursor(masterKey: string, scope: CursorScope, text: string): Cursor | undefined {
  const [payload, given, ...rest] = text.split('.');
  if (!payload || !given || rest.length > 0) return undefined;
  const expected = Buffer.from(mac(masterKey, scope, payload));
  const actual = Buffer.from(given);
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return undefined;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    if (
      Array.isArray(parsed) &&
      parsed.length === 2 &&
      typeof parsed[0] === 'string' &&
      typeof parsed[1] === 'string'
    )
      return { at: parsed[0], id: parsed[1] };
  } catch {
    // A payload that is not ours fails as a forged one does.
  }
  return undefined;
}

/** A page of a list, as the vendor SDK reads it. */
export interface Page<Item> {
  message: string;
  data: Item[];
  meta: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    nextCursor?: string;
    prevCursor?: string;
    totalCount: number;
  };
}

/**
 * Cuts a page out of rows fetched one past the limit, newest first when going forward and oldest first
 * when going back (`prevCursor`), and says what lies on either side.
 */
export function pageOf<Row extends { cursor: Cursor }>(
  rows: Row[],
  options: { limit: number; direction: 'next' | 'prev'; fromCursor: boolean },
): { rows: Row[]; hasNextPage: boolean; hasPreviousPage: boolean } {
  const more = rows.length > options.limit;
  const kept = rows.slice(0, options.limit);
  if (options.direction === 'prev') {
    kept.reverse();
    return { rows: kept, hasNextPage: true, hasPreviousPage: more };
  }
  return { rows: kept, hasNextPage: more, hasPreviousPage: options.fromCursor };
}
