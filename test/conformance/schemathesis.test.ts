import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers/env';
import type { MerchantCredentials } from '../../src/merchants/accounts';

/**
 * An external conformance check of the HTTP edge: Schemathesis (pinned, scripts/schemathesis-requirements.txt)
 * reads the OpenAPI document the service serves at /docs/json and sends what it generates from it, valid
 * and invalid, to every operation with the sandbox merchant's test key; the hooks encrypt the bodies that
 * travel in the envelope. Any 5xx, any answer its schema does not describe, any valid request refused or
 * invalid one accepted fails the run. The seed is fixed, so a run repeats the cases of the last.
 */
const here = resolve(import.meta.dirname);
const SEED = 20261125;
const MAX_EXAMPLES = Number(process.env.SCHEMATHESIS_MAX_EXAMPLES ?? 10);

let env: TestEnv;
let merchant: MerchantCredentials;
let baseUrl: string;

beforeAll(async () => {
  env = await startTestEnv({
    RATE_LIMIT_PER_SECOND: '100000',
    RATE_LIMIT_BURST: '100000',
    PAGE_RATE_LIMIT_PER_SECOND: '100000',
    PAGE_RATE_LIMIT_BURST: '100000',
    LOG_LEVEL: 'warn',
  });
  merchant = await env.createMerchant();
  await env.app.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(env.app.server.address() as AddressInfo).port}`;
});
afterAll(() => env?.close());

/** Runs `st` in `cwd` (a scratch directory: it keeps nothing in the checkout). */
function schemathesis(args: string[], extraEnv: NodeJS.ProcessEnv, cwd: string) {
  const binary = process.env.SCHEMATHESIS_PATH;
  if (!binary) throw new Error('SCHEMATHESIS_PATH must be set: run the tests with `npm test`.');
  return new Promise<{ code: number | null; output: string }>((done, fail) => {
    const child = spawn(binary, args, {
      cwd,
      env: { ...process.env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += String(chunk)));
    child.stderr.on('data', (chunk) => (output += String(chunk)));
    child.on('error', fail);
    child.on('close', (code) => done({ code, output }));
  });
}

describe('the served OpenAPI document, checked by Schemathesis', () => {
  it('holds for every operation: no 5xx, every answer as documented, the validators as documented', async () => {
    const reports = mkdtempSync(join(tmpdir(), 'payments-schemathesis-'));
    const started = Date.now();
    const { code, output } = await schemathesis(
      [
        '--config-file',
        join(here, 'schemathesis.toml'),
        'run',
        `${baseUrl}/docs/json`,
        '--checks',
        'all',
        '--seed',
        String(SEED),
        '--phases',
        process.env.SCHEMATHESIS_PHASES ?? 'examples,coverage,fuzzing,stateful',
        '--max-examples',
        String(MAX_EXAMPLES),
        // One worker: two threads can trip CPython 3.11 ("AST constructor recursion depth mismatch").
        '--workers',
        '1',
        // Nothing kept between runs: the seed alone decides the cases.
        '--generation-database',
        'none',
        '--no-color',
        '--header',
        `Authorization: Bearer ${merchant.test_secret_key}`,
        '--report',
        'ndjson',
        '--report-dir',
        reports,
      ],
      {
        SCHEMATHESIS_HOOKS: 'hooks',
        PYTHONPATH: here,
        PAYMENTS_ENCRYPTION_KEY: merchant.encryption_key,
      },
      reports,
    );
    const seconds = Math.round((Date.now() - started) / 1000);
    writeFileSync(join(reports, 'output.txt'), output);
    // "Test cases:\n  7170 generated, 7170 passed, 26 skipped"
    const cases = /Test cases:\s+(\d+) generated/.exec(output)?.[1];
    process.stdout.write(
      `[schemathesis] ${cases ?? 'no'} cases in ${seconds} s, exit ${code}; its output (kept when it fails): ${reports}/output.txt\n`,
    );
    expect(code, output.slice(-8000)).toBe(0);
    // A run that tested nothing (a document it could not read) proves nothing.
    expect(Number(cases)).toBeGreaterThan(1000);
    // Kept only when the run fails, for its cases and output.
    rmSync(reports, { recursive: true, force: true });
  }, 600_000);
});
