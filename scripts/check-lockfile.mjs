// Fails when package-lock.json lacks an entry for an optional dependency of a locked package.
//
// `npm install` on one platform quietly leaves out optional platform packages the registry does not
// serve at the wanted version, and `npm ci` on a fresh clone then refuses the lockfile as out of sync.
// Pin such a package in `overrides` to a release every platform has (see package.json).
import { readFileSync } from 'node:fs';

const lock = JSON.parse(readFileSync(new URL('../package-lock.json', import.meta.url), 'utf8'));
const locked = new Set(
  Object.keys(lock.packages)
    .filter((path) => path.includes('node_modules/'))
    .map((path) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)),
);
const missing = [];
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const name of Object.keys(entry.optionalDependencies ?? {})) {
    if (!locked.has(name)) missing.push(`${name} (optional dependency of ${path || 'the project'})`);
  }
}
if (missing.length > 0) {
  process.stderr.write(
    `package-lock.json lacks ${missing.length} optional package(s); npm ci will refuse it:\n  ` +
      `${missing.join('\n  ')}\nPin the parent in package.json "overrides" to a release the registry serves for every platform.\n`,
  );
  process.exit(1);
}
