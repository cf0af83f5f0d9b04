import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../src/dev/postgres';

describe('freePort', () => {
  it('answers a port below the ephemeral range, which a server can listen on', async () => {
    const [ephemeralStart] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    for (let i = 0; i < 20; i += 1) {
      const port = await freePort();
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(ephemeralStart!);
      await new Promise<void>((resolve, reject) => {
        const server = createServer().once('error', reject);
        server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
      });
    }
  });
});
