/**
 * The workflow bundle kept on disk between processes of the same code: a worker that starts again (a
 * deploy's next process, a restart after a crash, another worker on the machine) reads it instead of
 * bundling again, about 2.5 s of CPU each time. Keyed by everything the bundle can hold: every file under
 * workflows/, activities/ and src/, the lockfile (so every dependency's version), and what is bundled
 * with it; a change to any of them is another key. The cache lives in the user's own cache folder (mode
 * 0700: code another user could write there is never run), and is written whole, renamed into place, so a
 * process never reads half a bundle. Where the folder cannot be written, the worker just bundles.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';

const root = new URL('../..', import.meta.url).pathname;
const SOURCES = ['workflows', 'activities', 'src'];
const KEPT = 8;

/** Where the bundles are kept: the user's cache folder ($XDG_CACHE_HOME, or ~/.cache). */
export function bundleCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'payments', 'workflow-bundles');
}

/** The key of the bundle the code on disk makes with `variant` (what else is bundled in). */
export async function bundleKey(variant: string): Promise<string> {
  const hash = createHash('sha256').update(`${variant}\n`);
  const files = (
    await Promise.all(
      SOURCES.map(async (folder) =>
        (await readdir(join(root, folder), { recursive: true, withFileTypes: true }))
          .filter((entry) => entry.isFile() && /\.[cm]?[jt]s$/.test(entry.name))
          .map((entry) => join(entry.parentPath, entry.name)),
      ),
    )
  ).flat();
  for (const file of [...files, join(root, 'package-lock.json')].sort()) {
    hash.update(`${relative(root, file)}\n`).update(await readFile(file));
  }
  return hash.digest('hex').slice(0, 32);
}

/**
 * The bundle for `variant`: read from the cache when this code made one before, else made by `make` and
 * kept for the next process.
 */
export async function cachedBundle(
  variant: string,
  make: () => Promise<{ code: string }>,
  dir = bundleCacheDir(),
): Promise<{ code: string }> {
  const file = join(dir, `${await bundleKey(variant)}.js`);
  const kept = (await ownFolder(dir)) ? await readFile(file, 'utf8').catch(() => undefined) : undefined;
  if (kept !== undefined) return { code: kept };
  const bundle = await make();
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const partial = `${file}.${process.pid}.partial`;
    await writeFile(partial, bundle.code, { mode: 0o600 });
    await rename(partial, file);
    await forgetOld(dir);
  } catch {
    // A read-only or full disk: this process has its bundle; the next one bundles too.
  }
  return bundle;
}

/** Whether `dir` is this user's and no one else's to write (what is read from it is run). */
async function ownFolder(dir: string): Promise<boolean> {
  const folder = await stat(dir).catch(() => undefined);
  return folder !== undefined && folder.uid === process.getuid?.() && (folder.mode & 0o022) === 0;
}

/** Keeps the newest bundles only: each release leaves one behind. */
async function forgetOld(dir: string): Promise<void> {
  const names = (await readdir(dir)).filter((name) => name.endsWith('.js'));
  if (names.length <= KEPT) return;
  const aged = await Promise.all(
    names.map(async (name) => ({ name, at: (await stat(join(dir, name))).mtimeMs })),
  );
  aged.sort((a, b) => b.at - a.at);
  await Promise.all(aged.slice(KEPT).map(({ name }) => rm(join(dir, name), { force: true })));
}
