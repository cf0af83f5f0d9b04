import type { OpenAPIV3_1 } from 'openapi-types';
import { loadConfig } from '../platform/config';
import { buildApp, type AppDeps } from './app';
import { VARIABLE_SERVER } from './openapi';

/** A stand-in for Postgres or Temporal that throws, saying `what`, at the first touch. */
export function notConnected(what: string): object {
  return new Proxy(
    {},
    {
      get: (_target, property) => {
        throw new Error(`${what} (asked for ${String(property)})`);
      },
    },
  );
}

/** Nothing answers here: the routes are registered, never called. */
const NOT_CONNECTED = notConnected("the reference's app is not connected");

/**
 * The OpenAPI document as the routes declare it, with no database or Temporal: `npm run openapi` writes
 * it to openapi.json, the tests read it. Its server is the `{base_url}` variable; a running service
 * serves the same document with its own address at /docs/json.
 */
export async function referenceDocument(): Promise<OpenAPIV3_1.Document> {
  const config = loadConfig({
    DATABASE_URL: 'postgres://not-connected',
    MASTER_KEY: '0'.repeat(64),
    PAYLOAD_KEYS: `reference:${'0'.repeat(64)}`,
    LOG_LEVEL: 'silent',
  });
  const deps = { config, db: NOT_CONNECTED, temporal: NOT_CONNECTED } as AppDeps;
  const app = await buildApp(deps);
  try {
    await app.ready();
    return { ...(app.swagger() as OpenAPIV3_1.Document), servers: [VARIABLE_SERVER] };
  } finally {
    await app.close();
  }
}
