import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript without declarations (it runs before any TypeScript can).
import { bundleOf, importBundled } from '../../bin/bundled.js';

const dirs: string[] = [];
const scratch = () => {
  const dir = mkdtempSync(join(tmpdir(), 'payments-bundled-'));
  dirs.push(dir);
  return join(dir, 'bundles');
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

it('makes an entry bundle once and reads it again while the code is unchanged', async () => {
  const dir = scratch();
  const file = (await bundleOf('src/cli/index.ts', dir)) as string;
  expect(file).toMatch(/[\\/]entry\.mjs$/);
  const made = statSync(file).mtimeMs;
  expect(await bundleOf('src/cli/index.ts', dir)).toBe(file);
  expect(statSync(file).mtimeMs).toBe(made);
  expect(readdirSync(dir).filter((name) => name.endsWith('.partial'))).toEqual([]);
  // Another entry is another bundle.
  expect(await bundleOf('src/process/main.ts', dir)).not.toBe(file);
});

it('loads the module from the bundle, not through tsx', async () => {
  const dir = scratch();
  const cli = (await importBundled('src/cli/index.ts', dir)) as { runCli: unknown };
  expect(typeof cli.runCli).toBe('function');
  expect(readdirSync(dir)).toHaveLength(1);
});

it('never reads a bundle folder others may write, nor a link', async () => {
  const dir = scratch();
  const file = (await bundleOf('src/cli/index.ts', dir)) as string;
  chmodSync(dir, 0o777);
  expect(await bundleOf('src/cli/index.ts', dir)).toBeUndefined();
  chmodSync(dir, 0o755);
  const linked = `${dir}-linked`;
  symlinkSync(dir, linked);
  expect(await bundleOf('src/cli/index.ts', linked)).toBeUndefined();
  expect(await bundleOf('src/cli/index.ts', dir)).toBe(file);
});
