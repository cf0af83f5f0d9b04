import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { createDatabase, runMigrations } from '../../src/db/client';
import { startEmbeddedPostgres } from '../../src/dev/postgres';
import { allSearchAttributes } from '../../src/contracts';
import { workflowBundle } from '../../src/process/worker';
import { dynamicConfigArgs } from '../../src/dev/temporal';

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    templateDatabase: string;
    temporalAddress: string;
    workflowBundlePath: string;
    testServerPath: string;
  }
}

/** Its own name per run: runs may share a server (TEST_DATABASE_URL), as test:file's own test does. */
const TEMPLATE = `payments_test_template_${process.pid}`;

/**
 * Once per run: PostgreSQL (embedded, or TEST_DATABASE_URL), a migrated template database each test file
 * copies, a Temporal dev server (or TEMPORAL_ADDRESS), and the workflow bundle.
 */
export default async function setup(project: TestProject) {
  const scratch = mkdtempSync(join(tmpdir(), 'payments-test-'));
  // Embedded Postgres runs as its own user when we are root; it must reach its data directory.
  chmodSync(scratch, 0o755);
  const stops: (() => Promise<void>)[] = [];

  let adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    const postgres = await startEmbeddedPostgres({
      dir: join(scratch, 'pg'),
      database: 'postgres',
      persistent: false,
    });
    stops.push(() => postgres.stop());
    adminUrl = postgres.url;
  }
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${TEMPLATE}`);
  await admin.query(`create database ${TEMPLATE}`);
  await admin.end();
  const template = createDatabase(withDatabase(adminUrl, TEMPLATE), 1);
  await runMigrations(template.pool);
  await template.close();

  let temporalAddress = process.env.TEMPORAL_ADDRESS;
  if (!temporalAddress) {
    const cli = process.env.TEMPORAL_CLI_PATH;
    if (!cli)
      throw new Error('TEMPORAL_CLI_PATH or TEMPORAL_ADDRESS must be set: run the tests with `npm test`.');
    const env = await TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: cli },
        searchAttributes: allSearchAttributes,
        log: { format: 'pretty', level: 'error' },
        extraArgs: dynamicConfigArgs(),
      },
    });
    stops.push(() => env.teardown());
    temporalAddress = env.address;
  }

  // Read from the bundle cache when this code was bundled before (src/process/bundle-cache.ts).
  const bundle = await workflowBundle();
  const bundlePath = join(scratch, 'workflow-bundle.js');
  writeFileSync(bundlePath, bundle.code);

  project.provide('adminDatabaseUrl', adminUrl);
  project.provide('templateDatabase', TEMPLATE);
  project.provide('temporalAddress', temporalAddress);
  project.provide('workflowBundlePath', bundlePath);
  project.provide('testServerPath', process.env.TEMPORAL_TEST_SERVER_PATH ?? '');

  const server = adminUrl;
  if (process.env.TEST_DATABASE_URL) stops.push(() => dropDatabase(server, TEMPLATE));

  return async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    rmSync(scratch, { recursive: true, force: true });
  };
}

async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${name}`);
  } finally {
    await admin.end();
  }
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}
