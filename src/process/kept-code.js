// What every bundle of this code kept on disk stands on: the workflow bundle (src/process/bundle-cache.ts)
// and the process bundles (bin/bundled.js). Plain JavaScript, so that bin/bundled.js can run it before any
// TypeScript can; the checkout's root is given, since a bundle of this file stands elsewhere.
import { createHash } from 'node:crypto';
import { lstat, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';

const SOURCES = ['workflows', 'activities', 'src'];
const SETTINGS = [
  'tsconfig.json',
  'package.json',
  'package-lock.json',
  join('node_modules', '.package-lock.json'),
];

/**
 * A hash of `salt` and everything a bundle of this code can hold or be made with: every source file under
 * workflows/, activities/ and src/, the TypeScript and package settings, the lockfile and the installed
 * packages. A change to any of them is another hash.
 */
export async function codeHash(root, salt) {
  const hash = createHash('sha256').update(`${salt}\n`);
  const files = (
    await Promise.all(
      SOURCES.map(async (folder) =>
        (await readdir(join(root, folder), { recursive: true }))
          .filter((name) => /\.[cm]?[jt]s$/.test(name))
          .map((name) => join(folder, name)),
      ),
    )
  ).flat();
  for (const file of [...files.sort(), ...SETTINGS]) {
    hash.update(`${file}\n`).update(await readFile(join(root, file)).catch(() => 'absent'));
  }
  return hash.digest('hex').slice(0, 32);
}

/**
 * Whether `path` is a folder or file of this user's (or, with `rootToo`, root's: a container image's, made
 * while it was built) that no one else may write, and not a link: what is read from a bundle is run.
 */
export async function safeToRun(path, kind, { rootToo = false } = {}) {
  const found = await lstat(path).catch(() => undefined);
  return (
    found !== undefined &&
    (kind === 'folder' ? found.isDirectory() : found.isFile()) &&
    (found.uid === process.getuid?.() || (rootToo && found.uid === 0)) &&
    (found.mode & 0o022) === 0
  );
}
