import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, webhookSchedule } from '../../src/platform/config';

const valid = {
  DATABASE_URL: 'postgres://localhost/payments',
  MASTER_KEY: 'a'.repeat(64),
  PAYLOAD_KEYS: `k1:${'b'.repeat(64)}`,
};

describe('configuration', () => {
  it('applies defaults and derives the public base URL', () => {
    const config = loadConfig(valid);
    expect(config).toMatchObject({
      PORT: 3000,
      RATE_LIMIT_PER_SECOND: 100,
      RATE_LIMIT_BURST: 200,
      BODY_LIMIT_BYTES: 65536,
    });
    expect(config.baseUrl).toBe('http://127.0.0.1:3000');
    expect(webhookSchedule(config).delaysSeconds).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
  });

  it('fails fast naming every bad key at once', () => {
    let error: unknown;
    try {
      loadConfig({ MASTER_KEY: 'short', PORT: 'eighty', PAYLOAD_KEYS: 'nope', ALLOW_PRIVATE_URLS: 'maybe' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const key of ['DATABASE_URL', 'MASTER_KEY', 'PORT', 'PAYLOAD_KEYS', 'ALLOW_PRIVATE_URLS']) {
      expect(message).toContain(key);
    }
    expect(message).not.toContain('short');
  });
});
