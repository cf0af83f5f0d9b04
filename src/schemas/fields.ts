import { isIP } from 'node:net';
import { z } from 'zod';
import { isHttpUrl } from '../lib/urls';

export { isHttpUrl };
import { COUNTRY_CODES, countryAlpha2 } from '../lib/countries';
import { FIAT_CURRENCIES, isFiatCurrency } from '../lib/currencies';
import { JsonNumber } from '../lib/json';
import { canonicalDecimal, plainDecimal } from '../lib/units';

/**
 * What a field means and an example of it, for the API reference: its limits and rules are read from
 * the validator. An empty `examples` leaves the field out of the request's example.
 */
export function about<T extends z.ZodType>(schema: T, description: string, ...examples: unknown[]): T {
  return schema.meta({ description, ...(examples.length > 0 ? { examples } : {}) }) as T;
}

/** A field the reference describes with no example: the request's example leaves it out. */
export function aboutWithoutExample<T extends z.ZodType>(schema: T, description: string): T {
  return schema.meta({ description, examples: [] }) as T;
}

/** `first_name` -> `first name`, as merchants read it in messages. */
export function human(field: string): string {
  return field.replace(/_/g, ' ');
}

type Check = (value: string) => boolean;

const CONTROL_OR_LONE_SURROGATE =
  // Matching control characters is the point of this expression.
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u001f\u007f-\u009f]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True when text holds a control character (C0, DEL, C1) or a UTF-16 surrogate without its pair. */
export function hasUnsafeText(value: string): boolean {
  return CONTROL_OR_LONE_SURROGATE.test(value);
}

export const unsafeTextMessage = (field: string) =>
  `The ${human(field)} field must not contain control characters or invalid Unicode.`;

function typed(field: string, kind = 'a string') {
  return (issue: { input?: unknown }) =>
    issue.input === undefined || issue.input === null
      ? `The ${human(field)} field is required.`
      : `The ${human(field)} field must be ${kind}.`;
}

/**
 * What the API documents of text with no rule of its own: no control characters, and something besides
 * spaces (text is trimmed, and blank text is missing text). JSON Schema's regex dialect, which Python's and
 * JavaScript's engines both read the same.
 */
/** A space the API trims from around text: any white space but a control character (regex class). */
export const SPACE = '[^\\S\\u0000-\\u001f\\u007f-\\u009f]';

/** Text with no control character (C0, DEL, C1), in JSON Schema's regex dialect. */
export const CLEAN_TEXT_PATTERN = '^[^\\u0000-\\u001f\\u007f-\\u009f]*$';

export const PLAIN_TEXT_PATTERN =
  '^[^\\u0000-\\u001f\\u007f-\\u009f]*[^\\s\\u0000-\\u001f\\u007f-\\u009f][^\\u0000-\\u001f\\u007f-\\u009f]*$';

/**
 * A required string, trimmed, checked by `check`, with `rule` as the message's tail. `pattern` is the
 * check as JSON Schema says it, for the API reference (src/api/reference/schemas.ts); without a check, the text is
 * documented as `PLAIN_TEXT_PATTERN`. Lengths count characters (code points), as JSON Schema does.
 */
export function text(
  field: string,
  options: { max?: number; min?: number; check?: Check; rule?: string; pattern?: string } = {},
) {
  const max = options.max ?? 191;
  const min = options.min ?? 1;
  const pattern = options.pattern ?? (options.check ? undefined : PLAIN_TEXT_PATTERN);
  const lengthRule = `The ${human(field)} field must be between ${min} and ${max} characters.`;
  const checked = z
    .string({ error: typed(field) })
    // The longest length counts what was sent, spaces around it included (as JSON Schema counts it).
    .check((ctx) => {
      if ([...ctx.value].length > max && !hasUnsafeText(ctx.value))
        ctx.issues.push({ code: 'custom', input: ctx.value, message: lengthRule });
    })
    .trim()
    .check((ctx) => {
      const value = ctx.value;
      const length = [...value].length;
      if (hasUnsafeText(value)) {
        ctx.issues.push({ code: 'custom', input: '', message: unsafeTextMessage(field) });
      } else if (length === 0) {
        ctx.issues.push({ code: 'custom', input: value, message: `The ${human(field)} field is required.` });
      } else if (length < min || length > max) {
        ctx.issues.push({ code: 'custom', input: value, message: lengthRule });
      } else if (options.check && !options.check(value)) {
        ctx.issues.push({
          code: 'custom',
          input: value,
          message: `The ${human(field)} field must be ${options.rule ?? 'valid'}.`,
        });
      }
    });
  return pattern ? checked.meta({ pattern }) : checked;
}

// No control character either: refused wherever they appear, and the reference says so in this pattern.
const EMAIL =
  // eslint-disable-next-line no-control-regex
  /^[^\s@"(),:;<>[\\\]\u0000-\u001f\u007f-\u009f]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export const email = (field = 'email') =>
  text(field, {
    max: 254,
    check: (v) => EMAIL.test(v),
    rule: 'a valid email address',
    pattern: EMAIL.source,
  });

export const ipAddress = (field = 'ip_address') =>
  text(field, {
    max: 45,
    check: (v) => isIP(v) !== 0,
    rule: 'a valid IPv4 or IPv6 address',
  }).meta({ anyOf: [{ format: 'ipv4' }, { format: 'ipv6' }] });

export const phoneNumber = (field = 'phone_number') =>
  text(field, {
    max: 20,
    check: (v) => /^\+?\d{8,19}$/.test(v),
    rule: '8 to 19 digits with an optional leading +',
    pattern: '^\\+?[0-9]{8,19}$',
  });

/** Letters of any script, no spaces or punctuation. */
export const personName = (field: string) =>
  text(field, {
    min: 3,
    max: 191,
    check: (v) => /^\p{L}+$/u.test(v),
    rule: 'letters only',
    pattern: `^${SPACE}*\\p{L}{3,}${SPACE}*$`,
  });

export const httpUrl = (field: string) =>
  text(field, { max: 2048, check: isHttpUrl, rule: 'an absolute http or https URL' }).meta({
    format: 'uri',
    pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#]+',
  });

/** ISO 3166-1 country; the result is always alpha-2. */
export const country = (field = 'country', forms: 'alpha2' | 'alpha2or3' = 'alpha2') =>
  text(field, {
    max: 3,
    check: (v) => (forms === 'alpha2' ? v.length === 2 : true) && countryAlpha2(v) !== undefined,
    rule: forms === 'alpha2' ? 'a valid ISO 3166-1 alpha-2 country code' : 'a valid ISO 3166-1 country code',
  })
    .meta({
      enum: forms === 'alpha2' ? COUNTRY_CODES.alpha2 : [...COUNTRY_CODES.alpha2, ...COUNTRY_CODES.alpha3],
    })
    .transform((v) => countryAlpha2(v)!);

export const fiatCurrency = (field = 'currency') =>
  text(field, {
    max: 3,
    check: (v) => isFiatCurrency(v.toUpperCase()),
    rule: 'a valid ISO 4217 currency code',
  })
    .meta({ enum: FIAT_CURRENCIES })
    .transform((v) => v.toUpperCase());

/**
 * An amount's digits as plain decimal text: a JSON number in any of its exact forms (`1e2`, `1050.0`), a
 * string as digits with an optional fraction, spaces around it aside.
 */
const numberText = (value: unknown): string | undefined =>
  value instanceof JsonNumber
    ? plainDecimal(value.text)
    : typeof value === 'string'
      ? value.trim()
      : undefined;

/** A positive integer in minor units, as a bigint. */
export const minorAmount = (field = 'amount') =>
  // Any JSON value is read (and refused with the field's message); a client sends one of these.
  z
    .custom<number | bigint | string>(() => true)
    .transform((given, ctx) => {
      const value: unknown = given;
      const raw = numberText(value);
      if (value === undefined || value === null) {
        ctx.addIssue({ code: 'custom', message: `The ${human(field)} field is required.` });
        return z.NEVER;
      }
      // A whole number: `1050.0` is 1050, and leading zeros carry nothing.
      const whole = raw === undefined ? undefined : /^0*(\d{1,18})(?:\.0*)?$/.exec(raw)?.[1];
      if (
        whole === undefined ||
        (raw!.includes('.') && !(value instanceof JsonNumber)) ||
        BigInt(whole) <= 0n
      ) {
        ctx.addIssue({
          code: 'custom',
          message: `The ${human(field)} field must be a positive integer in the currency's minor units.`,
        });
        return z.NEVER;
      }
      return BigInt(whole);
    });

/** A positive decimal in major units, kept as its exact canonical text (no exponent, no float). */
export const decimalAmount = (field = 'amount') =>
  z
    .custom<number | string>(() => true)
    .transform((given, ctx) => {
      const value: unknown = given;
      if (value === undefined || value === null) {
        ctx.addIssue({ code: 'custom', message: `The ${human(field)} field is required.` });
        return z.NEVER;
      }
      const raw = numberText(value);
      const canonical = raw === undefined ? undefined : canonicalDecimal(raw);
      if (canonical === undefined || /^0(\.0*)?$/.test(canonical)) {
        ctx.addIssue({ code: 'custom', message: `The ${human(field)} field must be a positive number.` });
        return z.NEVER;
      }
      return canonical;
    });

/** Blank text, as an optional field may be sent instead of leaving it out. */
export const BLANK_PATTERN = `^${SPACE}*$`;

/** An optional field: left out, null or blank text (trimmed, it is empty) are all "not given". */
export const optional = <T extends z.ZodTypeAny>(schema: T) =>
  z.preprocess(
    (v) => (v === null || (typeof v === 'string' && v.trim() === '') ? undefined : v),
    schema.optional(),
    // What it takes, for the typed client: the field's own input, or nothing.
  ) as unknown as z.ZodOptional<z.ZodType<z.output<T>, z.input<T> | null>>;

export const orderId = (
  description = "The merchant's order id, unique per merchant and mode across all kinds: repeating it with " +
    'the same fields answers the original transaction, with other fields is `409`.',
) =>
  about(
    text('order_id', {
      max: 191,
      check: (v) => /^[\x21-\x7e]+$/.test(v),
      rule: 'printable ASCII without spaces',
      pattern: `^${SPACE}*[!-~]+${SPACE}*$`,
    }),
    description,
    'order-1001',
  );

export const terminalId = () =>
  about(
    text('terminal_id', { max: 64 }),
    "One of the merchant's active terminals for this mode and kind: pins that connector (no cascading).",
  );

export const redirectUrl = () =>
  about(
    httpUrl('redirect_url'),
    'Where the customer goes after a hosted page, with `transaction_id`, `order_id` and `status` added as ' +
      'query parameters. In live mode its host must be public (not loopback, private or link-local).',
    'https://shop.example/return',
  );

export const webhookUrl = () =>
  about(
    httpUrl('webhook_url'),
    "Where this transaction's webhooks are sent (see Webhooks). In live mode its host must be public.",
    'https://shop.example/webhooks',
  );

export const walletId = (description = "One of the merchant's wallets of this mode.") =>
  about(text('wallet_id', { max: 64 }), description, 'wal_4n0Qy2b7c9Xk1LmP3sTu');

export const transactionId = () =>
  about(
    text('transaction_id', { max: 191 }),
    'The transaction, by `transaction_id` or by `order_id`.',
    'PAq3LZ0x9Vb2Nc7Rt5Yw1Ks8D',
  );

export const cryptoCurrency = () =>
  about(upperCode('crypto_currency', 10), 'A crypto currency of the catalogue.', 'USDT');

export const cryptoNetwork = () =>
  optional(
    about(
      upperCode('crypto_network', 40),
      "The currency's network; may be left out when the currency has only one.",
      'TRON',
    ),
  );

export const fiatCurrencyOf = (description: string) =>
  about(fiatCurrency('fiat_currency'), description, 'USD');

/** A code such as a crypto currency or network, compared in upper case. */
export const upperCode = (field: string, max: number) =>
  text(field, { max }).transform((v) => v.toUpperCase());
