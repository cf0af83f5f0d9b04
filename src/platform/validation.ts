import type { z } from 'zod';
import { luhnValid } from '../lib/cards';
import type { Mode } from '../lib/vocabulary';
import { fieldError, validationError } from './errors';
import { hasUnsafeText, unsafeTextMessage } from '../schemas/fields';

/**
 * Every string in a request, keys included, that holds control characters or invalid Unicode, by
 * field path. Such text is refused wherever it appears: nothing downstream (Postgres, logs, pages,
 * webhooks) has to cope with it.
 */
function unsafeTextFields(input: unknown, path: string[] = [], found: Record<string, string[]> = {}) {
  if (typeof input === 'string') {
    if (hasUnsafeText(input)) {
      const field = path.length > 0 ? path.join('.') : 'body';
      found[field] = [unsafeTextMessage(path.at(-1) ?? 'body')];
    }
  } else if (input !== null && typeof input === 'object' && path.length < 16) {
    for (const [key, value] of Object.entries(input)) {
      if (hasUnsafeText(key)) found[path.length > 0 ? path.join('.') : 'body'] = [unsafeTextMessage('body')];
      else unsafeTextFields(value, [...path, key], found);
    }
  }
  return found;
}

/** Turns zod issues into the contract's 422: every failing field with its messages. */
export function parseInput<T extends z.ZodTypeAny>(schema: T, input: unknown): z.output<T> {
  const unsafe = unsafeTextFields(input);
  if (Object.keys(unsafe).length > 0) throw validationError(unsafe);
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const errors: Record<string, string[]> = {};
  for (const issue of result.error.issues) {
    const field = issue.path.length > 0 ? issue.path.join('.') : 'body';
    // The whole input is not an object (a JSON array, a string): say so, not the validator's wording.
    const message = field === 'body' ? 'The request body must be a JSON object.' : issue.message;
    (errors[field] ??= []).push(message);
  }
  throw validationError(errors);
}

/**
 * The interface's payout test cards fail the Luhn check: test mode takes them, so the request schemas do;
 * live mode refuses them as any number failing it.
 */
export function refuseSandboxCardInLive(mode: Mode, cardNumber: string): void {
  if (mode === 'live' && !luhnValid(cardNumber))
    fieldError('card_number', 'The card number field must be a valid card number.');
}
