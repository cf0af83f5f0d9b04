// `npm run openapi`: writes openapi.json, the merchant API's OpenAPI document, from the code that serves it
// (the routes' declarations, put together by src/api/openapi.ts). test/api/openapi.test.ts fails while the file is not what this writes.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { referenceDocument } from '../src/api/document';

export const OPENAPI_FILE = fileURLToPath(new URL('../openapi.json', import.meta.url));

/** The file's text: formatted as `npm run format` would, so the format check passes it as written. */
export async function openApiFileText(): Promise<string> {
  const options = (await resolveConfig(OPENAPI_FILE)) ?? {};
  return format(JSON.stringify(await referenceDocument()), { ...options, filepath: OPENAPI_FILE });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(OPENAPI_FILE, await openApiFileText());
  process.stdout.write(`wrote ${OPENAPI_FILE}\n`);
}
