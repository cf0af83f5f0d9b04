/**
 * The workflow bundle kept on disk between processes of the same code: a worker that starts again (a
 * deploy's next process, a restart after a crash, another worker on the machine) reads it instead of
 * bundling again, about 2.5 s of CPU each time. Keyed by everything the bundle can hold (every source file,
 * the settings, the lockfile and the installed packages: src/process/kept-code.js) and what is bundled with
 * it; a change to any of them is another key. The cache lives
 * in the user's own cache folder (mode 0700: a folder or file another user could write, or a link, is
 * never read, since what is read is run), and is written whole under a name of its own, renamed into
 * place, so a process never reads half a bundle. Where the key cannot be made or the folder cannot be
 * written, the worker just bundles.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { root } from '../platform/root';
import { codeHash, safeToRun } from './kept-code.js';

const KEPT = 8;

/** Where the bundles are kept: the user's cache folder ($XDG_CACHE_HOME, or ~/.cache). */
export function bundleCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'payments', 'workflow-bundles');
}

/** The key of the bundle the code on disk makes with `variant` (what else is bundled in). */
export const bundleKey = (variant: string): Promise<string> => codeHash(root, variant);

/**
 * The bundle for `variant`: read from the cache when this code made one before, else made by `make` and
 * kept for the next process.
 */
export async function cachedBundle(
  variant: string,
  make: () => Promise<{ code: string }>,
  dir = bundleCacheDir(),
): Promise<{ code: string }> {
  const key = await bundleKey(variant).catch(() => undefined);
  if (!key) return make();
  const file = join(dir, `${key}.js`);
  const trusted = (await safeToRun(dir, 'folder')) && (await safeToRun(file, 'file'));
  const kept = trusted ? await readFile(file, 'utf8').catch(() => undefined) : undefined;
  if (kept !== undefined) return { code: kept };
  const bundle = await make();
  const partial = `${file}.${randomBytes(6).toString('hex')}.partial`;
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFile(partial, bundle.code, { mode: 0o600, flag: 'wx' });
    await rename(partial, file);
    await forgetOld(dir);
  } catch {
    // A read-only or full disk: this process has its bundle; the next one bundles too.
    await rm(partial, { force: true }).catch(() => undefined);
  }
  return bundle;
}

/** Keeps the newest bundles only: each release leaves one behind. */
async function forgetOld(dir: string): Promise<void> {
  const names = (await readdir(dir)).filter((name) => name.endsWith('.js') || name.endsWith('.partial'));
  if (names.length <= KEPT) return;
  const aged = await Promise.all(
    names.map(async (name) => ({ name, at: (await stat(join(dir, name))).mtimeMs })),
  );
  aged.sort((a, b) => b.at - a.at);
  await Promise.all(aged.slice(KEPT).map(({ name }) => rm(join(dir, name), { force: true })));
}
