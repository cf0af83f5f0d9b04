import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bundleKey, cachedBundle } from '../../src/process/bundle-cache';

const dirs: string[] = [];
const fresh = () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'payments-bundles-')), 'cache');
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(join(dir, '..'), { recursive: true, force: true });
});

describe('the workflow bundle cache', () => {
  it('bundles once for the same code and reads the bundle after', async () => {
    const dir = fresh();
    let made = 0;
    const make = async () => ({ code: `bundle ${++made}` });
    expect(await cachedBundle('plain', make, dir)).toEqual({ code: 'bundle 1' });
    expect(await cachedBundle('plain', make, dir)).toEqual({ code: 'bundle 1' });
    expect(made).toBe(1);
    // Another variant (the traced workers') is another bundle.
    expect(await cachedBundle('traced', make, dir)).toEqual({ code: 'bundle 2' });
    expect(readdirSync(dir).filter((name) => name.endsWith('.js'))).toHaveLength(2);
    expect(readdirSync(dir).some((name) => name.endsWith('.partial'))).toBe(false);
  });

  it('keys by the code: a variant or any source changes the key', async () => {
    expect(await bundleKey('plain')).toBe(await bundleKey('plain'));
    expect(await bundleKey('plain')).not.toBe(await bundleKey('traced'));
  });

  it('never runs a bundle from a folder others may write', async () => {
    const dir = fresh();
    let made = 0;
    const make = async () => ({ code: `bundle ${++made}` });
    await cachedBundle('plain', make, dir);
    chmodSync(dir, 0o777);
    expect(await cachedBundle('plain', make, dir)).toEqual({ code: 'bundle 2' });
  });
});
