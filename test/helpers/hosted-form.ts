import type { FastifyInstance } from 'fastify';

/**
 * Opens a hosted page as a browser would (its CSRF cookie and token) and returns a way to post its forms:
 * to the page itself, or to `action` under it.
 */
export async function openHostedPage(app: FastifyInstance, path: string) {
  const page = await app.inject({ url: path });
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
  const cookie = String(page.headers['set-cookie']).split(';')[0]!;
  const submit = (fields: Record<string, string>, action = path) =>
    app.inject({
      method: 'POST',
      url: action,
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      payload: new URLSearchParams({ ...fields, csrf }).toString(),
    });
  return { page, csrf, cookie, submit };
}
