// The caches of `npm test`'s three slowest checks, kept outside the clone (~/.cache/payments/checks) so that
// a fresh clone's checks redo only what changed: TypeScript's incremental build info (it compares each file's
// contents and type-checks again every file a change can affect), ESLint's results per file, by content, and
// the hashes of the files Prettier passed (scripts/format-check.mjs: Prettier's own cache cannot move between
// clones). They are keyed by the lockfile, the Node version and the tools' configurations; the checks run on
// copies inside the clone's node_modules, put back when they are done.
//
// ESLint's cache has one known limit: a file is linted again when it changed, not when only a file it
// imports changed the types its type-aware rules read. `npm run lint` lints every file afresh.
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { cacheRoot } from './toolchain.mjs';

/** What the caches depend on besides the files they check. */
const KEYED_BY = ['package-lock.json', 'tsconfig.json', 'eslint.config.js', 'eslint.boundaries.js'];
/** How many keys' caches are kept (the newest): a branch switch back finds its own. */
const KEPT = 3;
/** Caches whose contents name the clone's absolute path (TypeScript's names paths relative to itself). */
const ABSOLUTE = new Set(['eslint']);
const FILES = ['tsc.tsbuildinfo', 'eslint', 'prettier.json'];

const root = resolve('.');
const local = join(root, 'node_modules', '.cache', 'payments-checks');

function keyDir() {
  const hash = createHash('sha256').update(process.version);
  for (const file of KEYED_BY) hash.update(`\0${file}\0`).update(existsSync(file) ? readFileSync(file) : '');
  return join(cacheRoot, 'checks', hash.digest('hex').slice(0, 16));
}

/** Paths inside the clone the checks write their caches to. */
export const checkCache = {
  tsc: join(local, 'tsc.tsbuildinfo'),
  eslint: join(local, 'eslint'),
  /** scripts/format-check.mjs: hashes of the files that passed, by contents (paths relative to the clone). */
  prettier: join(local, 'prettier.json'),
};

/** Stands for the clone's absolute path in a kept cache. */
const ROOT = '<clone>';

/** Copies the kept caches into the clone, their paths made this clone's. */
export function restoreCheckCaches() {
  mkdirSync(local, { recursive: true });
  const dir = keyDir();
  for (const file of FILES) {
    const kept = join(dir, file);
    if (!existsSync(kept)) continue;
    const text = readFileSync(kept, 'utf8');
    writeFileSync(join(local, file), ABSOLUTE.has(file) ? text.replaceAll(`${ROOT}/`, `${root}/`) : text);
  }
}

/** Keeps the caches the checks left in the clone for the next run, whatever the checks found. */
export function keepCheckCaches() {
  const dir = keyDir();
  mkdirSync(dir, { recursive: true });
  for (const file of FILES) {
    if (!existsSync(join(local, file))) continue;
    const text = readFileSync(join(local, file), 'utf8');
    // Written whole, then renamed: another run reading at the same time sees the old file or the new one.
    const partial = join(dir, `${file}.${process.pid}`);
    writeFileSync(partial, ABSOLUTE.has(file) ? text.replaceAll(`${root}/`, `${ROOT}/`) : text);
    renameSync(partial, join(dir, file));
  }
  const keys = readdirSync(join(cacheRoot, 'checks'))
    .map((name) => ({ name, at: statSync(join(cacheRoot, 'checks', name)).mtimeMs }))
    .sort((a, b) => b.at - a.at);
  for (const { name } of keys.slice(KEPT))
    rmSync(join(cacheRoot, 'checks', name), { recursive: true, force: true });
}
