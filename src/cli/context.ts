import { userInfo } from 'node:os';
import type { Client } from '@temporalio/client';
import { ConfigError, loadCliConfig, type CliConfig } from '../platform/config';
import type { Database } from '../db/client';
import { dataDir, devSecrets, readDevInstance } from '../platform/dev-instance';
import { stringifyExact } from '../lib/json';
import { CliError } from './errors';

/** What every command gets: the parsed configuration, the database, Temporal on demand, output. */
export interface CliContext {
  config: CliConfig;
  database: Database;
  temporal(): Promise<Client>;
  print(value: unknown, json: boolean): void;
}

export type Command = (ctx: CliContext, argv: string[]) => Promise<void>;

/**
 * The CLI's configuration, through the service's own parser: the environment (`DATABASE_URL` and
 * `MASTER_KEY` at least), or else the running `npm run dev` instance.
 */
export function cliConfig(env: NodeJS.ProcessEnv): CliConfig {
  let source = env;
  if (!env.DATABASE_URL) {
    const instance = readDevInstance();
    if (!instance) {
      throw new CliError(
        `DATABASE_URL is not set and no \`npm run dev\` instance is running with its data in ${dataDir} (set PAYMENTS_DATA_DIR to the one it uses).`,
      );
    }
    source = {
      PAYLOAD_KEYS: devSecrets().payload_keys,
      ALLOW_SANDBOX_IN_LIVE: 'true',
      ...env,
      DATABASE_URL: instance.database_url,
      MASTER_KEY: instance.master_key,
      TEMPORAL_ADDRESS: instance.temporal_address,
      ...(instance.temporal_ui && !env.TEMPORAL_UI_URL ? { TEMPORAL_UI_URL: instance.temporal_ui } : {}),
    };
  }
  try {
    return loadCliConfig(source);
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(error.message);
    throw error;
  }
}

/** JSON as the API writes it: minor units and exact decimals as exact numbers; indented unless `--json`. */
export function print(value: unknown, json: boolean): void {
  process.stdout.write(`${stringifyExact(value, json ? undefined : 2)}\n`);
}

/** Who an ops action is recorded as: the operating-system user unless `--actor` says otherwise. */
export const actorOf = (given: string | undefined): string => given ?? userInfo().username;
