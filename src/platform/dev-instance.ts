import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';

export const dataDir = resolve(process.env.PAYMENTS_DATA_DIR ?? '.data');

export interface DevSecrets {
  master_key: string;
  payload_keys: string;
  codec_token: string;
}

/** Secrets `npm run dev` generates once into `.data/` and reuses. */
export function devSecrets(): DevSecrets {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, 'secrets.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as DevSecrets;
  const secrets: DevSecrets = {
    master_key: randomBytes(32).toString('hex'),
    payload_keys: `dev1:${randomBytes(32).toString('hex')}`,
    codec_token: randomBytes(24).toString('base64url'),
  };
  writeFileSync(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  return secrets;
}

/** Where the running dev instance is, so the CLI can reach it without configuration. */
export interface DevInstance {
  database_url: string;
  master_key: string;
  temporal_address: string;
  api_url: string;
  /** The Temporal CLI the dev server runs from, for `npx payments temporal …`. */
  temporal_cli?: string;
  /** The Temporal UI of the dev server, for the links ops commands print. */
  temporal_ui?: string;
}

export const devInstanceFile = join(dataDir, 'dev-instance.json');

export function readDevInstance(): DevInstance | undefined {
  return existsSync(devInstanceFile)
    ? (JSON.parse(readFileSync(devInstanceFile, 'utf8')) as DevInstance)
    : undefined;
}
