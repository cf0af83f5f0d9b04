// `npm test`'s format check: `prettier --check .`, without checking again a file whose contents passed
// before. Prettier's own cache cannot move between clones (it hashes each file's options with its absolute
// path), so a fresh clone would format all its files again: about 16 s of CPU beside the tests. This one
// keeps a hash of every file that passed (Prettier's version, the file's path, its resolved options and
// its contents) in `checkCache.prettier` (scripts/check-caches.mjs), and checks only the files it does not
// know. The same files as Prettier's CLI: those Git lists (tracked, and untracked ones the root `.gitignore`
// leaves, as Prettier reads only that one), less what `.gitignore` and `.prettierignore` name, less links,
// that Prettier has a parser for. Where Git cannot list them (no `.git`, no git), Prettier's CLI runs
// itself, uncached. `npm run format:check` always runs Prettier's CLI.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import * as prettier from 'prettier';
import { checkCache } from './check-caches.mjs';

const listed = spawnSync(
  'git',
  [
    'ls-files',
    '-z',
    '--cached',
    '--others',
    ...(existsSync('.gitignore') ? ['--exclude-from=.gitignore'] : []),
  ],
  { encoding: 'utf8' },
);
if (listed.status !== 0) {
  process.stdout.write(
    `git cannot list the files (${String(listed.stderr ?? listed.error).trim()}): Prettier checks all\n`,
  );
  const cli = spawnSync('npx', ['prettier', '--check', '.'], { stdio: 'inherit' });
  process.exit(cli.status ?? 1);
}
const files = [...new Set(listed.stdout.split('\0').filter(Boolean))]
  // Prettier's CLI leaves links alone, and files gone from the work tree are not there to check.
  .filter((file) => lstatSync(file, { throwIfNoEntry: false })?.isFile())
  .sort();

const known = new Set(
  existsSync(checkCache.prettier) ? JSON.parse(readFileSync(checkCache.prettier, 'utf8')) : [],
);
const passed = [];
const unformatted = [];
let checked = 0;
for (const file of files) {
  const info = await prettier.getFileInfo(file, { ignorePath: ['.gitignore', '.prettierignore'] });
  if (info.ignored || !info.inferredParser) continue;
  const options = { ...(await prettier.resolveConfig(file)), filepath: file };
  const source = readFileSync(file, 'utf8');
  const hash = createHash('sha256')
    .update(`${prettier.version}\0${JSON.stringify(options)}\0`)
    .update(source)
    .digest('hex');
  if (!known.has(hash)) {
    checked += 1;
    const ok = await prettier.check(source, options).catch((error) => {
      process.stdout.write(`[error] ${file}: ${error.message}\n`);
      return false;
    });
    if (!ok) {
      unformatted.push(file);
      continue;
    }
  }
  passed.push(hash);
}
const partial = `${checkCache.prettier}.${process.pid}`;
writeFileSync(partial, JSON.stringify(passed));
renameSync(partial, checkCache.prettier);

for (const file of unformatted) process.stdout.write(`[warn] ${file}\n`);
if (unformatted.length > 0) {
  process.stdout.write(
    `[warn] Code style issues found in ${unformatted.length} files. Run \`npm run format\` to fix.\n`,
  );
  process.exit(1);
}
process.stdout.write(
  `All matched files use Prettier code style! (${passed.length} files, ${checked} checked, the others unchanged since they passed)\n`,
);
