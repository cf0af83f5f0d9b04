import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, freePortRun } from '../../src/dev/postgres';
import { ServiceProcess, until, ready } from '../faults/harness';
import { RUNNABLE, blocksOf, documents, type Block } from './blocks';

/**
 * Every example of the README and docs/ runs as pasted, in the order a reader meets it, against what
 * `npm run dev` runs: the shell blocks of a page in one shell (a variable an earlier block sets is there
 * for the next), TypeScript and JavaScript blocks as modules, JSON blocks parsed. The reader's directory
 * is a checkout like theirs (`.data` is the dev stack's), so `npx payments` and `./.data/…` work as
 * written. A block that cannot run here says why, in a `<!-- doc-test: not run: … -->` line above it.
 */
const root = resolve(import.meta.dirname, '../..');
let reader: string;
let dev: ServiceProcess;
/** A folder put first on the reader's PATH, holding the `npx` below. */
let shims: string;

/**
 * `npx` as the examples use it: `npx payments` runs the checkout's own bin, as npx does, without npm's
 * start-up (a second or more each, about sixty calls); any other package goes to the real npx.
 */
function npxShim(realNpx: string): string {
  return [
    '#!/bin/sh',
    'if [ "$1" = payments ] && [ -f ./bin/payments.js ]; then shift; exec node ./bin/payments.js "$@"; fi',
    `exec ${JSON.stringify(realNpx)} "$@"`,
    '',
  ].join('\n');
}

beforeAll(async () => {
  reader = mkdtempSync(join(tmpdir(), 'payments-reader-'));
  // Embedded Postgres runs as its own user when the tests run as root: it must reach .data.
  chmodSync(reader, 0o755);
  // The checkout's files, but its own .data (and no .git: nothing a reader pastes needs history).
  for (const entry of readdirSync(root).filter((name) => !['.data', '.git'].includes(name)))
    symlinkSync(join(root, entry), join(reader, entry));
  const data = join(reader, '.data');
  mkdirSync(data, { mode: 0o755 });
  shims = mkdtempSync(join(tmpdir(), 'payments-reader-bin-'));
  const realNpx = spawnSync('sh', ['-c', 'command -v npx'], { encoding: 'utf8' }).stdout.trim();
  writeFileSync(join(shims, 'npx'), npxShim(realNpx), { mode: 0o755 });
  // The local chains listen on five consecutive ports from DEV_ANVIL_PORT, apart from the others.
  const anvil = await freePortRun(5);
  const others = new Set<number>();
  while (others.size < 6) {
    const port = await freePort();
    if (port < anvil || port > anvil + 4) others.add(port);
  }
  const [api, postgres, temporal, ui, btcd, solana] = [...others] as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PAYMENTS_DATA_DIR: data,
    PORT: String(api),
    DEV_POSTGRES_PORT: String(postgres),
    DEV_TEMPORAL_PORT: String(temporal),
    DEV_TEMPORAL_UI_PORT: String(ui),
    DEV_ANVIL_PORT: String(anvil),
    DEV_BTCD_PORT: String(btcd),
    DEV_SOLANA_PORT: String(solana),
    LOG_LEVEL: 'warn',
  };
  // What the test runner puts in the environment is not the reader's (Vite's BASE_URL is '/').
  for (const name of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'BASE_URL', 'NODE_ENV']) delete env[name];
  dev = new ServiceProcess('npm run dev', [process.execPath, join(root, 'scripts/dev.mjs')], env);
  dev.start();
  await until('npm run dev to be ready', ready(`http://127.0.0.1:${api}`), 180_000, () => dev.ended).catch(
    (error: Error) => {
      throw new Error(`${error.message}; its output:\n${dev.log}`);
    },
  );
}, 240_000);

afterAll(async () => {
  await dev?.stop();
  if (reader) rmSync(reader, { recursive: true, force: true });
  if (shims) rmSync(shims, { recursive: true, force: true });
}, 60_000);

/** The reader's environment: theirs, not the test runner's. */
function readerEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of [
    'DATABASE_URL',
    'TEMPORAL_ADDRESS',
    'BASE_URL',
    'NODE_ENV',
    'VITEST',
    'PAYMENTS_DATA_DIR',
  ])
    delete env[name];
  env.PATH = `${shims}:${env.PATH ?? ''}`;
  return env;
}

const where = (block: Block) => `${block.file}:${block.line}`;

/** Runs a page's shell blocks in one shell, in order; fails naming the block that failed. */
function runShell(blocks: Block[]): void {
  if (blocks.length === 0) return;
  const script = blocks.map((block) => `echo "@@ ${where(block)}" >&2\n${block.code}\n`).join('\n');
  const result = spawnSync('bash', ['-euo', 'pipefail', '-c', script], {
    cwd: reader,
    env: readerEnv(),
    encoding: 'utf8',
    timeout: 300_000,
  });
  const failedAt = [...(result.stderr ?? '').matchAll(/^@@ (\S+)$/gm)].at(-1)?.[1];
  expect(
    result.status,
    `the shell block at ${failedAt} failed:\n${result.stdout.slice(-3000)}\n${result.stderr.slice(-3000)}`,
  ).toBe(0);
}

/** Writes a TypeScript or JavaScript block as a module of the reader's checkout; answers its path. */
function moduleOf(block: Block, index: number): string {
  const file = join(reader, `doc-example-${index}.${block.lang === 'ts' ? 'ts' : 'mjs'}`);
  writeFileSync(file, block.code);
  return file;
}

/** Type-checks TypeScript blocks as the reader's editor would: with the checkout's compiler options. */
function typecheck(files: string[], blocks: Block[]): void {
  if (files.length === 0) return;
  const config = join(reader, 'tsconfig.doc-examples.json');
  writeFileSync(config, JSON.stringify({ extends: './tsconfig.json', include: files }));
  const result = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', config], {
    cwd: reader,
    encoding: 'utf8',
    timeout: 120_000,
  });
  expect(result.status, `${blocks.map(where).join(', ')} do not compile:\n${result.stdout}`).toBe(0);
}

/** Runs a module of the reader's checkout. */
function runModule(block: Block, file: string): void {
  const result = spawnSync(process.execPath, ['--import', 'tsx', file], {
    cwd: reader,
    env: readerEnv(),
    encoding: 'utf8',
    timeout: 120_000,
  });
  expect(result.status, `${where(block)} failed:\n${result.stdout}\n${result.stderr}`).toBe(0);
}

describe('the examples of the README and docs/, as pasted', () => {
  const pages = documents(root);

  it.each(pages)('%s', { timeout: 420_000 }, (file) => {
    const blocks = blocksOf(root, file).filter((b) => RUNNABLE.includes(b.lang));
    const run = blocks.filter((b) => !b.notRun);
    for (const block of run.filter((b) => b.lang === 'json'))
      expect(() => JSON.parse(block.code), `${where(block)} is JSON`).not.toThrow();
    const modules = run
      .map((block, i) => ({ block, i }))
      .filter(({ block }) => block.lang === 'ts' || block.lang === 'js')
      .map(({ block, i }) => ({ block, file: moduleOf(block, i) }));
    const typed = modules.filter(({ block }) => block.lang === 'ts');
    typecheck(
      typed.map((m) => m.file),
      typed.map((m) => m.block),
    );
    runShell(run.filter((b) => b.lang === 'sh'));
    for (const { block, file } of modules) runModule(block, file);
  });

  it(
    'packages/client: packed, installed into an empty project, its README pays by card and verifies the webhook',
    {
      timeout: 300_000,
    },
    () => {
      const project = mkdtempSync(join(tmpdir(), 'payments-shop-'));
      try {
        const run = (command: string, args: string[], cwd: string, env = readerEnv()) => {
          const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: 180_000 });
          expect(result.status, `${command} ${args.join(' ')}:\n${result.stdout}\n${result.stderr}`).toBe(0);
          return result.stdout;
        };
        // As a merchant would: the tarball `npm pack` makes (built by its prepack), into a project of their own.
        const packed = run(
          'npm',
          ['pack', '-w', 'packages/client', '--pack-destination', project, '--json'],
          root,
        );
        const [{ filename }] = JSON.parse(packed) as [{ filename: string }];
        writeFileSync(
          join(project, 'package.json'),
          JSON.stringify({ name: 'shop', private: true, type: 'module' }),
        );
        run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', `./${filename}`], project);
        // Its README's examples, type-checked as a merchant's Node project would (node's own types from here),
        // then run against `npm run dev` with the sandbox merchant's keys.
        const file = 'packages/client/README.md';
        const examples = blocksOf(root, file).filter((block) => block.lang === 'ts' && !block.notRun);
        expect(examples.length).toBeGreaterThan(0);
        const names = examples.map((block, i) => {
          writeFileSync(join(project, `example-${i}.ts`), block.code);
          return `example-${i}.ts`;
        });
        const compilerOptions = {
          target: 'ES2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          outDir: 'out',
          typeRoots: [join(root, 'node_modules/@types')],
          types: ['node'],
        };
        writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: names }));
        run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', '.'], project);
        const merchant = JSON.parse(readFileSync(join(reader, '.data/sandbox-merchant.json'), 'utf8'));
        const instance = JSON.parse(readFileSync(join(reader, '.data/dev-instance.json'), 'utf8'));
        const env = {
          ...readerEnv(),
          PAYMENTS_URL: instance.api_url,
          PAYMENTS_SECRET_KEY: merchant.test_secret_key,
          PAYMENTS_ENCRYPTION_KEY: merchant.encryption_key,
          PAYMENTS_WEBHOOK_SECRET: merchant.webhook_secret,
        };
        const output = names
          .map((name) => run(process.execPath, [join('out', name.replace(/\.ts$/, '.js'))], project, env))
          .join('');
        expect(output).toMatch(/^created PA\S+ SUCCESS$/m);
        expect(output).toMatch(/^webhook verified status SUCCESS$/m);
        expect(output).toContain('404 Transaction not found.');
      } finally {
        rmSync(project, { recursive: true, force: true });
      }
    },
  );

  it('runs every example but the few that say why not', () => {
    const skipped = pages.flatMap((file) => blocksOf(root, file)).filter((b) => b.notRun);
    for (const block of skipped) expect(block.notRun!.length, where(block)).toBeGreaterThan(10);
    // The two commands around everything, Docker Compose, a live node, a Stripe account, and
    // docs/testing.md's Vitest example (a test file of its own, test/unit/testing-guide.test.ts): no more.
    expect(skipped.length).toBeLessThanOrEqual(7);
  });
});
