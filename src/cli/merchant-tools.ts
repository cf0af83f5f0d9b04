import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { decryptEnvelope, encryptEnvelope } from '../ciphers/envelope';
import { verifyWebhook } from '../webhooks/signing';
import { CliError } from './errors';

/**
 * Tools for a merchant's developer, which need no service configuration (docs/api.md, the envelope;
 * docs/webhooks.md, signatures): encrypt a request body, decrypt a payload, verify a received webhook.
 */
export type MerchantTool = (argv: string[], io: { stdin: () => string; out: (text: string) => void }) => void;

/** The text to work on: `--data`, else `--file`, else standard input. */
function input(values: { data?: string; file?: string }, stdin: () => string): string {
  if (values.data !== undefined) return values.data;
  if (values.file !== undefined) return readFileSync(values.file, 'utf8');
  return stdin();
}

function encryptionKey(key: string | undefined): string {
  if (!key) throw new CliError('--key is required: the merchant encryption key (32 characters)');
  if (Buffer.byteLength(key, 'utf8') !== 32)
    throw new CliError('--key must be 32 bytes (the 32-character encryption key)');
  return key;
}

export const merchantTools: Record<string, MerchantTool> = {
  /** `payments encrypt --key KEY [--data JSON | --file F]`: the request body to send, `{"payload": …}`. */
  encrypt(argv, io) {
    const { values } = parseArgs({
      args: argv,
      options: { key: { type: 'string' }, data: { type: 'string' }, file: { type: 'string' } },
    });
    const key = encryptionKey(values.key);
    const text = input(values, io.stdin).trim();
    let fields: unknown;
    try {
      fields = JSON.parse(text);
    } catch {
      fields = undefined;
    }
    if (typeof fields !== 'object' || fields === null || Array.isArray(fields))
      throw new CliError('the fields to encrypt must be a JSON object of the request fields');
    io.out(`${JSON.stringify({ payload: encryptEnvelope(text, key) })}\n`);
  },

  /** `payments decrypt --key KEY [--data PAYLOAD | --file F]`: the fields an envelope carries. */
  decrypt(argv, io) {
    const { values } = parseArgs({
      args: argv,
      options: { key: { type: 'string' }, data: { type: 'string' }, file: { type: 'string' } },
    });
    const key = encryptionKey(values.key);
    let payload = input(values, io.stdin).trim();
    // Either the bare `<iv hex>:<ciphertext hex>` or the body `{"payload": "…"}`.
    if (payload.startsWith('{')) {
      try {
        payload = String((JSON.parse(payload) as { payload?: unknown }).payload ?? '');
      } catch {
        throw new CliError('the input is neither a payload nor a JSON body with "payload"');
      }
    }
    const plain = decryptEnvelope(payload, key);
    if (plain === undefined) throw new CliError('Encryption Key is invalid. (or the payload is not one)');
    io.out(`${plain}\n`);
  },

  /**
   * `payments webhooks verify --secret S --id evt_… --timestamp T --signature v1,… [--hash HEX]
   * [--file BODY | --data BODY] [--tolerance 300]`: whether a received webhook is ours; exit status 1 when not.
   */
  'webhooks verify'(argv, io) {
    const { values } = parseArgs({
      args: argv,
      options: {
        secret: { type: 'string' },
        id: { type: 'string' },
        timestamp: { type: 'string' },
        signature: { type: 'string' },
        hash: { type: 'string' },
        data: { type: 'string' },
        file: { type: 'string' },
        tolerance: { type: 'string' },
      },
    });
    for (const name of ['secret', 'id', 'timestamp', 'signature'] as const)
      if (!values[name])
        throw new CliError(
          `--${name} is required (the webhook-${name === 'secret' ? 'secret' : name} header)`,
        );
    const tolerance = values.tolerance === undefined ? 300 : Number(values.tolerance);
    if (!Number.isInteger(tolerance) || tolerance < 0)
      throw new CliError('--tolerance must be whole seconds');
    const check = verifyWebhook(
      input(values, io.stdin),
      { id: values.id!, timestamp: values.timestamp!, signature: values.signature!, hash: values.hash },
      values.secret!,
      { toleranceSeconds: tolerance },
    );
    io.out(`${JSON.stringify({ valid: check.signature && check.hash && check.fresh, ...check })}\n`);
    if (!(check.signature && check.hash && check.fresh)) throw new CliError('the webhook does not verify');
  },
};
