import { describe, expect, it } from 'vitest';
import { edgeApp } from '../helpers/edge';
import type { FoundLink } from '../../src/transactions/link-use';

/**
 * The hosted pages at the edge: they reach the domain through the same services as the routes
 * (src/api/services.ts), so they run here with stand-ins and no database or Temporal.
 */
describe('hosted pages through their services', () => {
  it('answers an unknown payment link with its page, having asked the service once', async () => {
    const { app, calls } = await edgeApp({ findLink: async () => undefined });
    const response = await app.inject({ method: 'GET', url: '/api/v1/test/link/lnk_unknown' });
    expect(response.statusCode).toBe(404);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.body).toContain('Payment link not found');
    expect(calls.findLink?.map(([, mode, id]) => [mode, id])).toEqual([['test', 'lnk_unknown']]);
  });

  it('says a link is used or expired from what the service found, before any form is built', async () => {
    const link = (status: string, expiresAt: Date) =>
      ({ link: { id: 'lnk_1', mode: 'test', status, expiresAt }, template: {} }) as unknown as FoundLink;
    const tomorrow = new Date(Date.now() + 86_400_000);
    for (const [found, says] of [
      [link('used', tomorrow), 'This payment link has already been used.'],
      [link('active', new Date(Date.now() - 1000)), 'This payment link has expired.'],
    ] as const) {
      const { app, calls } = await edgeApp({ findLink: async () => found });
      const response = await app.inject({ method: 'GET', url: '/api/v1/test/link/lnk_1' });
      expect(response.body).toContain(says);
      // The form (which reads the catalogue) was never asked for.
      expect(calls.linkForm).toBeUndefined();
    }
  });
});
