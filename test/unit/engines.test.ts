import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

/**
 * `npm ci` warns EBADENGINE for every locked package whose `engines.node` the running Node does not
 * satisfy (README: the Node lines the service runs on). npm test runs this tier on Node 20 and on Node 24,
 * so a package that asks for more than either is found here, named, before a merchant's install warns.
 */
describe('the locked packages', () => {
  it(`all run on this Node (${process.version})`, () => {
    const lock = JSON.parse(readFileSync(join(import.meta.dirname, '../../package-lock.json'), 'utf8')) as {
      packages: Record<
        string,
        { version?: string; engines?: { node?: string } | string[]; optional?: boolean }
      >;
    };
    const refusing = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && !entry.optional)
      .flatMap(([path, entry]) => {
        const wanted = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
        return wanted && !semver.satisfies(process.version, wanted, { includePrerelease: true })
          ? [`${path}@${entry.version ?? ''} wants node ${wanted}`]
          : [];
      });
    expect(refusing).toEqual([]);
  });
});
