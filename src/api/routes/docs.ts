import type { FastifyInstance } from 'fastify';
import swaggerUi from '@fastify/swagger-ui';

/**
 * Swagger UI's own styles make some blocks wider than a phone (long paths, tag descriptions, tables,
 * nested schemas): wrap and narrow them instead of widening the whole page.
 */
const PHONE_CSS = `
@media (max-width: 600px) {
  .swagger-ui .wrapper { padding: 0 10px; }
  .swagger-ui .info .title { word-break: break-word; }
  .swagger-ui .renderedMarkdown td, .swagger-ui .renderedMarkdown th { overflow-wrap: anywhere; }
  .swagger-ui .markdown pre, .swagger-ui .microlight, .swagger-ui .highlight-code { max-width: 100%; overflow-x: auto; }
  .swagger-ui .scheme-container .schemes { flex-wrap: wrap; gap: 10px; }
  .swagger-ui .opblock-tag { flex-wrap: wrap; }
  .swagger-ui .opblock-tag small { flex: 1 1 100%; order: 3; padding: 0 0 8px; }
  .swagger-ui .opblock .opblock-summary { flex-wrap: wrap; }
  .swagger-ui .opblock .opblock-summary-path { max-width: 100%; word-break: break-all; flex-shrink: 1; }
  .swagger-ui .opblock .opblock-summary-description { flex-basis: 100%; }
  .swagger-ui .responses-table .response-col_links { display: none; }
  .swagger-ui .model-box { max-width: 100%; overflow-x: auto; }
  .swagger-ui .json-schema-2020-12--embedded.json-schema-2020-12:first-of-type,
  .swagger-ui .json-schema-2020-12--embedded { margin-left: 8px; margin-right: 0; }
}
`;

const VIEWPORT = '<meta name="viewport" content="width=device-width, initial-scale=1">';

/**
 * The API reference at /docs: Swagger UI (served from the package, no CDN) over the OpenAPI document
 * @fastify/swagger builds from the routes' own declarations (src/api/openapi.ts); the document itself at
 * /docs/json.
 */
export async function docsRoutes(app: FastifyInstance): Promise<void> {
  // Swagger UI's page has no viewport tag: a phone would lay it out 980 pixels wide and shrink it.
  app.addHook('onSend', async (_request, reply, payload) =>
    typeof payload === 'string' && String(reply.getHeader('content-type')).startsWith('text/html')
      ? payload.replace('<head>', `<head>\n${VIEWPORT}`)
      : payload,
  );
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    uiConfig: {
      // Without the top bar: its URL box is of no use here, and its logo brings an inline style the CSP refuses.
      layout: 'BaseLayout',
      deepLinking: true,
      docExpansion: 'list',
      defaultModelsExpandDepth: 0,
      defaultModelExpandDepth: 3,
      displayRequestDuration: true,
    },
    theme: { title: 'Payments API', css: [{ filename: 'phone.css', content: PHONE_CSS }] },
  });
}
