/**
 * Builds the merchant's client package (this folder) from the typed client the service's tests use,
 * src/client: one ES module with the envelope and webhook checks built in, and type declarations that stand
 * alone. Run by `npm run build -w packages/client` (and `npm pack`, before it packs).
 *
 * - dist/index.js: src/client bundled with esbuild. The endpoint declarations it reads are replaced by what
 *   a call needs of them (method, path, how the body comes), so no zod schema or service code ships.
 * - dist/index.d.ts: the client's declarations as TypeScript writes them; each request type written out
 *   field by field from the `z.input` of the schema the service validates it with, so the package needs no
 *   zod to type-check, and a field the API requires cannot be left out.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { build } from 'esbuild';
import { format } from 'prettier';
import ts from 'typescript';
import * as endpoints from '../../src/schemas/endpoints/index';
import type { Endpoint } from '../../src/schemas/endpoints/index';

const here = import.meta.dirname;
const root = resolve(here, '../..');
const entry = join(root, 'src/client/index.ts');
const dist = join(here, 'dist');

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });

/** What a call of each endpoint needs: the client reads nothing else of a declaration. */
const calls = Object.entries(endpoints as Record<string, unknown>).flatMap(([name, declared]) => {
  if (typeof declared !== 'object' || declared === null || !('url' in declared)) return [];
  const { method, url, config } = declared as Endpoint;
  const { body, testOnly } = config.reference;
  return [
    `export const ${name} = ${JSON.stringify({ method, url, config: { reference: { body, testOnly } } })};`,
  ];
});

await build({
  entryPoints: [entry],
  outfile: join(dist, 'index.js'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  legalComments: 'none',
  plugins: [
    {
      name: 'endpoint-calls',
      setup(plugin) {
        plugin.onResolve({ filter: /\/schemas\/endpoints$/ }, () => ({
          path: 'endpoints',
          namespace: 'calls',
        }));
        plugin.onLoad({ filter: /.*/, namespace: 'calls' }, () => ({
          contents: calls.join('\n'),
          loader: 'js',
        }));
      },
    },
  ],
});

// The declarations: TypeScript's own for the client and the webhook check it returns, and the request
// types written out.
const options: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  strict: true,
  skipLibCheck: true,
  declaration: true,
  emitDeclarationOnly: true,
  types: ['node'],
};
const program = ts.createProgram([entry], options);
const declarations = new Map<string, string>();
const emitted = program.emit(undefined, (file, text) => declarations.set(relative(root, file), text));
if (emitted.diagnostics.length > 0)
  throw new Error(ts.formatDiagnostics(emitted.diagnostics, ts.createCompilerHost(options)));
const declaration = (file: string) => {
  const text = declarations.get(file);
  if (text === undefined) throw new Error(`TypeScript wrote no ${file}`);
  return text;
};
// Relative imports name their files, as Node's ESM resolution (and TypeScript's `nodenext`) wants.
const index = declaration('src/client/index.d.ts')
  .replaceAll("'../webhooks/signing'", "'./signing.js'")
  .replaceAll("'./requests'", "'./requests.js'");
if (/from '\.\.\//.test(index)) throw new Error('the client declarations import from outside the client');
await write('index.d.ts', index);
await write('signing.d.ts', declaration('src/webhooks/signing.d.ts'));
await write('requests.d.ts', writtenOut(program, join(root, 'src/client/requests.ts')));

/** Each exported type alias of `file` as the structural type it stands for, with its comment. */
function writtenOut(program: ts.Program, file: string): string {
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file)!;
  const flags = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.InTypeAlias;
  const aliases = source.statements.filter(ts.isTypeAliasDeclaration).map((alias) => {
    // Every comment above it: the first alias carries the file's own too.
    const comment = ts
      .getJSDocCommentsAndTags(alias)
      .map((doc) => doc.getText(source))
      .join('\n\n');
    const type = checker.typeToString(checker.getTypeAtLocation(alias.name), undefined, flags);
    return `${comment}\nexport type ${alias.name.text} = ${type};`;
  });
  return aliases.join('\n\n');
}

async function write(name: string, text: string): Promise<void> {
  const file = join(dist, name);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, await format(text, { filepath: file, printWidth: 110, singleQuote: true }));
}
