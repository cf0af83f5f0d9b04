// Runs a TypeScript entry of this checkout (the service, the CLI, the dev stack) from one bundle of it and
// its own sources, made with esbuild the first time this code runs and kept for the next process: loading
// it takes about a third of the CPU of compiling every module through tsx as it is imported (docs/
// operations.md, "Starting fast"). Packages stay in node_modules, imported as they are.
//
// The bundle is kept in node_modules/.cache/payments/bundles/ (inside the checkout, so that the packages
// it imports resolve), keyed by everything it holds: the entry, every file under src/, activities/ and
// workflows/, the lockfile and the installed packages; a change to any of them is another key, so an
// edited file is never run from an old bundle. Like the workflow bundle cache, a folder or file that is a
// link or that another user could write is never read, since what is read is run; bundles are written
// under a name of their own and renamed into place. Where the bundle cannot be made or kept, the entry runs
// through tsx as before.
//
//   node bin/bundled.js src/dev/index.ts      runs an entry whose module starts itself
//   node bin/bundled.js --build ENTRY.ts...   only makes the bundles (a container image, while it is built)
//   import { importBundled } from './bundled.js'; await importBundled('src/cli/index.ts')
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, stat, utimes } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { codeHash, safeToRun } from '../src/process/kept-code.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const KEPT = 12;
const DAY_MS = 24 * 3600 * 1000;

/** Where bundles are kept. */
export const bundlesDir = join(root, 'node_modules', '.cache', 'payments', 'bundles');

/** The module `entry` (a path from the checkout's root) exports, loaded from its bundle. */
export async function importBundled(entry, dir = bundlesDir) {
  let why = 'no bundle could be kept';
  const file = await bundleOf(entry, dir).catch((error) => {
    why = error instanceof Error ? error.message : String(error);
    return undefined;
  });
  if (file) {
    // Stack traces name the TypeScript sources, as they do under tsx.
    process.setSourceMapsEnabled(true);
    try {
      return await import(pathToFileURL(file).href);
    } catch (error) {
      // Only a bundle gone before it was read (removed by hand) is run another way; an error of the code
      // itself is the code's, and running it again would repeat what it did before failing.
      if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes(file)) throw error;
      why = 'its bundle was removed';
    }
  }
  process.stderr.write(`[bundled] ${entry} runs through tsx: ${why}\n`);
  const { register } = await import('tsx/esm/api');
  register();
  return import(pathToFileURL(join(root, entry)).href);
}

/** The bundle of `entry` for the code on disk: kept from an earlier process, or made now and kept. */
export async function bundleOf(entry, dir = bundlesDir) {
  const { version, build } = await import('esbuild');
  const key = await keyOf(entry, version);
  const folder = join(dir, key);
  const file = join(folder, 'entry.mjs');
  if ((await own(dir, 'folder')) && (await own(folder, 'folder')) && (await own(file, 'file'))) {
    // In use: the clean-up below keeps what was used lately.
    await utimes(folder, new Date(), new Date()).catch(() => undefined);
    return file;
  }
  // Readable by all (a container's user reads the bundle its image made as root), writable by its owner.
  await mkdir(dir, { recursive: true, mode: 0o755 });
  if (!(await own(dir, 'folder'))) return undefined;
  const partial = `${folder}.${randomBytes(6).toString('hex')}.partial`;
  try {
    await build({
      entryPoints: { entry: join(root, entry) },
      outdir: partial,
      outExtension: { '.js': '.mjs' },
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: `node${process.versions.node.split('.')[0]}`,
      packages: 'external',
      sourcemap: 'linked',
      logLevel: 'silent',
      plugins: [checkoutRoot],
    });
    // A source saved while esbuild read them: what was bundled may not be what the key names.
    if ((await keyOf(entry, version)) !== key) throw new Error('the sources changed while they were bundled');
    await rename(partial, folder).catch(async (error) => {
      // Another process kept the same bundle first: theirs is as good.
      if (!(await own(file, 'file'))) throw error;
    });
    await forgetOld(dir);
    return file;
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
}

/** src/platform/root.ts names the checkout from its own place, which a bundle does not keep: it is given. */
const checkoutRoot = {
  name: 'checkout-root',
  setup(build) {
    build.onLoad({ filter: /[\\/]src[\\/]platform[\\/]root\.ts$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      const named = text.replace(
        /fileURLToPath\(new URL\('\.\.\/\.\.', import\.meta\.url\)\)/,
        JSON.stringify(root.replace(/[\\/]$/, '')),
      );
      if (named === text)
        throw new Error(`${relative(root, args.path)} no longer names the root as expected`);
      return { contents: named, loader: 'ts' };
    });
  },
};

/** The key of `entry`'s bundle: a hash of everything the bundle holds or is made with. */
const keyOf = (entry, esbuildVersion) =>
  codeHash(root, `${entry}\n${root}\n${esbuildVersion}\n${process.version}`);

/** Bundles made as root (a container image's, while it was built) are read by its other users too. */
const own = (path, kind) => safeToRun(path, kind, { rootToo: true });

/**
 * Keeps the newest bundles only (every edit of the sources leaves one behind), and none younger than a day:
 * a process still running from one may yet load a part of it.
 */
async function forgetOld(dir) {
  const names = await readdir(dir);
  if (names.length <= KEPT) return;
  const aged = await Promise.all(
    // A folder another process renames or removes meanwhile counts as new: it is left alone.
    names.map(async (name) => ({
      name,
      at: (await stat(join(dir, name)).catch(() => undefined))?.mtimeMs ?? Date.now(),
    })),
  );
  aged.sort((a, b) => b.at - a.at);
  const old = aged.slice(KEPT).filter(({ at }) => Date.now() - at > DAY_MS);
  await Promise.all(old.map(({ name }) => rm(join(dir, name), { recursive: true, force: true })));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [first, ...rest] = process.argv.slice(2);
  if (!first) {
    process.stderr.write('usage: node bin/bundled.js ENTRY.ts [ARGS...] | --build ENTRY.ts...\n');
    process.exit(2);
  }
  if (first === '--build') {
    for (const entry of rest) {
      if (!(await bundleOf(entry))) throw new Error(`${entry}: no bundle could be kept in ${bundlesDir}`);
    }
  } else {
    process.argv.splice(2, 1);
    await importBundled(first);
  }
}
