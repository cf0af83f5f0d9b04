import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join } from 'node:path';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import ts from 'typescript';
import { parse } from 'yaml';
import { UI_ACTIONS_OFF } from '../../src/dev/ui-proxy';
import { allSearchAttributes } from '../../src/contracts';
import { NAMESPACE_REFRESH_MS } from '../../src/temporal/search-attributes';
import { loadConfig } from '../../src/platform/config';

const root = new URL('../..', import.meta.url).pathname;
const read = (path: string) => readFileSync(join(root, path), 'utf8');

type Env = Record<string, string | number | boolean | null>;
interface Service {
  image?: string;
  build?: unknown;
  container_name?: string;
  command?: string | string[];
  environment?: Env;
  ports?: string[];
  volumes?: string[];
  configs?: { source: string; target: string }[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string | string[] };
  restart?: string;
  stop_grace_period?: string;
}
interface Compose {
  services: Record<string, Service>;
  configs?: Record<string, { content?: string }>;
}

const composeText = read('docker-compose.yml');
// Compose reads YAML merge keys (`<<: *service`), which YAML 1.2 leaves out unless asked.
const compose = parse(composeText, { merge: true }) as Compose;
const { services } = compose;
const service = (name: string): Service => {
  const found = services[name];
  if (!found) throw new Error(`docker-compose.yml has no service ${name}`);
  return found;
};

/** `.env.example` as name → value; comments and blank lines skipped. */
const example = new Map(
  read('.env.example')
    .split('\n')
    .map((line) => /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [m[1]!, m[2]!]),
);

/** Values for the secrets `.env.example` leaves empty, shaped as the service expects them. */
const secrets: Record<string, string> = {
  MASTER_KEY: 'a'.repeat(64),
  PAYLOAD_KEYS: `k1:${'b'.repeat(64)}`,
  CODEC_TOKEN: 'c'.repeat(32),
  POSTGRES_PASSWORD: 'd'.repeat(32),
  TEMPORAL_DB_PASSWORD: 'e'.repeat(32),
};
const dotEnv = new Map([...example].map(([name, value]) => [name, value || secrets[name] || '']));

// `${NAME}`, `${NAME:-default}`, `${NAME:?message}` and the forms without the colon; `$$` is a literal `$`.
const interpolation = /(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}/g;
const interpolated = new Set([...composeText.matchAll(interpolation)].map((m) => m[1]!));

/** A value as Compose gives it to the container, with `.env` made from `.env.example` and test secrets. */
function resolve(value: unknown): string {
  return String(value)
    .replace(interpolation, (_, name: string, operator: string | undefined, rest: string | undefined) => {
      const set = dotEnv.get(name);
      if (operator?.endsWith('?') && !set) throw new Error(`${name} is required and has no value`);
      return set || (operator?.endsWith('-') ? (rest ?? '') : '');
    })
    .replaceAll('$$', '$');
}
const environment = (name: string) =>
  Object.fromEntries(Object.entries(service(name).environment ?? {}).map(([k, v]) => [k, resolve(v)]));
const command = (name: string) => [service(name).command ?? []].flat().join('\n');
const seconds = (duration: string) => {
  const m = /^(\d+)s$/.exec(duration);
  if (!m) throw new Error(`expected a duration in seconds, got ${duration}`);
  return Number(m[1]);
};
/** `[host_ip:]host:container` → the host part, resolved. */
const publishedPort = (name: string) =>
  resolve(service(name).ports?.[0] ?? '')
    .split(':')
    .at(-2) ?? '';
/** Services that others wait on to finish (`service_completed_successfully`): set-up steps, not daemons. */
const oneShots = new Set(
  Object.values(services).flatMap((s) =>
    Object.entries(s.depends_on ?? {})
      .filter(([, d]) => d.condition === 'service_completed_successfully')
      .map(([name]) => name),
  ),
);

describe('docker-compose.yml', () => {
  it('is valid under the Compose specification', () => {
    const schema = JSON.parse(read('test/fixtures/compose-spec.json')) as Record<string, unknown>;
    // The schema names draft-07 by its https address, which Ajv knows by the http one: left out, Ajv applies
    // draft-07, its default.
    delete schema.$schema;
    // strictTypes only flags the schema's own style (union types, keywords with no type beside them) and
    // says nothing of our file; the rest of strict mode stays on.
    const ajv = new Ajv({ allErrors: true, strictTypes: false });
    addFormats(ajv);
    const validate = ajv.compile(schema);
    const valid = validate(compose);
    expect(ajv.errorsText(validate.errors, { separator: '\n' })).toBe('No errors');
    expect(valid).toBe(true);
  });

  it('gives every long-running service a health check, and waits on health or completion', () => {
    for (const [name, s] of Object.entries(services)) {
      if (oneShots.has(name)) {
        expect(s.restart ?? 'no', `${name} runs once`).toBe('no');
        continue;
      }
      expect(s.healthcheck?.test, `${name} has a health check`).toBeDefined();
      for (const [dependency, { condition }] of Object.entries(s.depends_on ?? {})) {
        expect(condition, `${name} → ${dependency}`).toBe(
          oneShots.has(dependency) ? 'service_completed_successfully' : 'service_healthy',
        );
      }
    }
    expect([...oneShots].sort()).toEqual(['temporal-schema', 'temporal-setup']);
  });

  it('runs the API and the worker from one build, told apart by ROLE, each free to scale', () => {
    const [api, worker] = [service('api'), service('worker')];
    expect(api.build).toBeDefined();
    expect(worker.build).toEqual(api.build);
    expect(worker.image).toEqual(api.image);
    const [apiEnv, workerEnv] = [environment('api'), environment('worker')];
    expect([apiEnv.ROLE, workerEnv.ROLE]).toEqual(['api', 'worker']);
    for (const key of Object.keys(apiEnv).filter((k) => k in workerEnv && k !== 'ROLE')) {
      expect(workerEnv[key], key).toBe(apiEnv[key]);
    }
    expect(api.container_name).toBeUndefined();
    expect(worker.container_name).toBeUndefined();
    // Replicas cannot share one host port: the API publishes a range, the worker nothing.
    expect(publishedPort('api')).toMatch(/^\d+-\d+$/);
    expect(worker.ports ?? []).toEqual([]);
  });

  it('gives each role an environment the service accepts, with nothing it does not read', () => {
    for (const name of ['api', 'worker']) {
      const env = environment(name);
      const config = loadConfig(env);
      expect(
        Object.keys(env).filter((key) => !(key in config)),
        `${name}: not read by the service`,
      ).toEqual([]);
    }
  });

  it('checks readiness where each role serves it', () => {
    const api = loadConfig(environment('api'));
    const worker = loadConfig(environment('worker'));
    expect([service('api').healthcheck?.test].flat().join(' ')).toContain(
      `fetch('http://127.0.0.1:${api.PORT}/readyz')`,
    );
    expect([service('worker').healthcheck?.test].flat().join(' ')).toContain(
      `fetch('http://127.0.0.1:${worker.METRICS_PORT}/readyz')`,
    );
  });

  it('lets each role drain and finish its work before Docker kills it', () => {
    for (const name of ['api', 'worker']) {
      const config = loadConfig(environment(name));
      const grace = seconds(service(name).stop_grace_period ?? '10s');
      expect(grace, name).toBeGreaterThan(config.SHUTDOWN_DRAIN_SECONDS + config.SHUTDOWN_GRACE_SECONDS);
    }
    expect(environment('api').SHUTDOWN_DRAIN_SECONDS).toBeDefined();
  });

  it('holds no secret: each is a required interpolation from .env', () => {
    const secretKeys = [
      'MASTER_KEY',
      'PAYLOAD_KEYS',
      'CODEC_TOKEN',
      'POSTGRES_PASSWORD',
      'POSTGRES_PWD',
      'SQL_PASSWORD',
      'TEMPORAL_DB_PASSWORD',
    ];
    for (const [name, s] of Object.entries(services)) {
      for (const [key, value] of Object.entries(s.environment ?? {})) {
        if (secretKeys.includes(key)) expect(value, `${name}.${key}`).toMatch(/^\$\{[A-Z_]+:\?[^}]*\}$/);
      }
    }
    const databaseUrl = String(service('api').environment?.DATABASE_URL);
    expect(databaseUrl).toMatch(/^postgres:\/\/[^:]+:\$\{POSTGRES_PASSWORD:\?[^}]*\}@/);
    // No default value for a secret anywhere, and nothing that looks like a key.
    for (const m of composeText.matchAll(interpolation)) {
      if (secretKeys.includes(m[1]!)) expect(m[0]).toMatch(/^\$\{[A-Z_]+:\?/);
    }
    expect(composeText).not.toMatch(/[0-9a-f]{32}/i);
    for (const key of Object.keys(secrets)) expect(example.get(key), `.env.example ${key}`).toBe('');
  });

  it('reads exactly the variables .env.example lists', () => {
    expect([...interpolated].filter((name) => !example.has(name))).toEqual([]);
    // .env reaches the containers only through the file's interpolations: anything else there is ignored.
    expect([...example.keys()].filter((name) => !interpolated.has(name))).toEqual([]);
    // A bare `$name` is an interpolation too (nginx variables must be written `$$name`).
    expect(composeText.replaceAll('$$', '').match(/\$(?!\{)\S*/g) ?? []).toEqual([]);
  });

  it('sets up Temporal explicitly on Postgres, with the server release the schema belongs to', () => {
    const server = service('temporal').image ?? '';
    expect(server).toMatch(/^temporalio\/server:\d+\.\d+\.\d+$/);
    expect(composeText).not.toContain('auto-setup');
    const release = server.split(':')[1]!;
    for (const name of oneShots)
      expect(service(name).image, name).toMatch(`temporalio/admin-tools:${release}-`);
    const env = environment('temporal');
    expect(env.DB).toBe('postgres12');
    expect(service('temporal').depends_on?.['temporal-schema']?.condition).toBe(
      'service_completed_successfully',
    );

    const schema = command('temporal-schema');
    for (const [db, dir] of [
      [env.DBNAME, 'temporal'],
      [env.VISIBILITY_DBNAME, 'visibility'],
    ]) {
      const tool = `temporal-sql-tool --plugin postgres12 --db ${db}`;
      expect(schema).toContain(`${tool} setup-schema -v 0.0`);
      expect(schema).toContain(
        `${tool} update-schema -d /etc/temporal/schema/postgresql/v12/${dir}/versioned`,
      );
    }
    // The databases exist before that: Postgres's init script creates them for the same role.
    const init = service('postgres').volumes?.find((v) => v.includes('/docker-entrypoint-initdb.d/'));
    const script = read(init!.split(':')[0]!);
    for (const db of [env.DBNAME, env.VISIBILITY_DBNAME]) {
      expect(script).toContain(`CREATE DATABASE ${db} OWNER ${env.POSTGRES_USER};`);
    }
  });

  it('mounts the dynamic config that enables update-with-start and updates', () => {
    const path = environment('temporal').DYNAMIC_CONFIG_FILE_PATH;
    const mount = service('temporal').volumes?.find((v) => v.split(':')[1] === path);
    expect(mount, `a volume mounted at ${path}`).toBeDefined();
    const file = mount!.split(':')[0]!;
    expect(file).toBe('./deploy/temporal/dynamicconfig.yaml');
    const dynamic = parse(read(file)) as Record<string, { value: unknown }[]>;
    for (const key of ['frontend.enableExecuteMultiOperation', 'frontend.enableUpdateWorkflowExecution']) {
      expect(dynamic[key], key).toEqual([{ value: true }]);
    }
    // The namespace reload our set-ups wait out; the forced search-attribute read (a database read per
    // lookup, 12 % of the server's CPU per transaction: bench/README.md) is not needed with that wait.
    expect(dynamic['system.namespaceCacheRefreshInterval']).toEqual([
      { value: `${NAMESPACE_REFRESH_MS / 1000}s` },
    ]);
    expect(dynamic['system.forceSearchAttributesCacheRefreshOnRead']).toBeUndefined();
  });

  it('registers every search attribute the service sets', () => {
    const setup = command('temporal-setup').replace(/\\\n\s*/g, '');
    expect(setup).toContain('temporal operator search-attribute create --namespace default');
    expect(environment('api').TEMPORAL_NAMESPACE).toBe('default');
    // Then waits until the frontend accepts a query over every one, and one namespace reload more.
    const wait = setup.slice(setup.indexOf('temporal workflow count'));
    expect(wait).toMatch(/^temporal workflow count --namespace default --query "/);
    expect(wait).toMatch(/exit 1; }\s*sleep (\d+)\s*$/);
    expect(Number(/sleep (\d+)\s*$/.exec(wait)![1]) * 1000).toBeGreaterThan(NAMESPACE_REFRESH_MS);
    for (const key of allSearchAttributes) {
      expect(key.type).toBe('KEYWORD');
      expect(setup).toContain(`--name ${key.name} --type Keyword`);
      expect(wait.split('\n')[0]).toContain(`${key.name} = 'usable'`);
    }
  });

  it("points the Temporal UI's codec at the API through the proxy that adds the token", () => {
    const ui = environment('temporal-ui');
    expect(ui.TEMPORAL_CODEC_ENDPOINT).toBe(`http://localhost:${publishedPort('codec-proxy')}/codec`);
    const api = loadConfig(environment('api'));
    const origins = api.CODEC_CORS_ORIGINS.split(',');
    expect(origins).toContain(`http://localhost:${publishedPort('temporal-ui')}`);
    const proxy = service('codec-proxy').configs?.[0];
    const nginx = resolve(compose.configs?.[proxy!.source]?.content);
    expect(nginx).toContain(`set $api http://api:${api.PORT};`);
    expect(nginx).toContain(`proxy_set_header Authorization "Bearer ${api.CODEC_TOKEN}";`);
    expect(nginx).toContain(`listen ${service('codec-proxy').ports?.[0]?.split(':').at(-1)};`);
  });

  it('switches off in the Temporal UI what npm run dev switches off: Start Workflow, Terminate, batch actions', () => {
    const ui = environment('temporal-ui');
    const names: Record<keyof typeof UI_ACTIONS_OFF, string> = {
      StartWorkflowDisabled: 'TEMPORAL_START_WORKFLOW_DISABLED',
      WorkflowTerminateDisabled: 'TEMPORAL_WORKFLOW_TERMINATE_DISABLED',
      BatchActionsDisabled: 'TEMPORAL_BATCH_ACTIONS_DISABLED',
    };
    for (const name of Object.values(names)) expect(ui[name], name).toBe('true');
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile').replace(/\\\n/g, ' ');
  const stages = dockerfile.split(/^FROM /m).slice(1);
  const final = stages.at(-1) ?? '';
  const pkg = JSON.parse(read('package.json')) as {
    scripts: Record<string, string>;
    dependencies: Record<string, string>;
    optionalDependencies?: Record<string, string>;
    allowScripts?: Record<string, boolean>;
  };

  it('builds in stages, installing production dependencies only', () => {
    expect(stages.length).toBeGreaterThan(1);
    const installs = dockerfile.match(/npm (ci|install)\b[^\n]*/g) ?? [];
    expect(installs.filter((line) => line.startsWith('npm ci'))).not.toEqual([]);
    for (const line of installs) {
      if (!/--global/.test(line)) expect(line).toContain('--omit=dev');
    }
    // npm reads allowScripts (which install scripts may run) from 11 on; older ones run every script.
    if (pkg.allowScripts) expect(Number(/npm@(\d+)/.exec(dockerfile)?.[1])).toBeGreaterThanOrEqual(11);
  });

  it('runs what `npm start` runs, as the node user, in production mode', () => {
    const script = /^node (\S+)$/.exec(pkg.scripts.start ?? '')?.[1];
    expect(script).toBeDefined();
    expect(final).toContain(`CMD ["node", "${script}"]`);
    // The bundle it runs is made while the image is built: the node user cannot write the code's folder.
    expect(final).toMatch(/^RUN node bin\/bundled\.js --build src\/process\/main\.ts\b/m);
    expect(final).toMatch(/^USER node$/m);
    expect(final).toMatch(/^ENV NODE_ENV=production\b/m);
    for (const path of ['package.json', 'src', 'workflows', 'activities', 'migrations', 'bin']) {
      expect(final, `copies ${path}`).toMatch(new RegExp(`^COPY [^\\n]*\\b${path}\\b`, 'm'));
    }
  });

  it('leaves local state, dependencies and secrets out of the build context', () => {
    const ignored = read('.dockerignore').split('\n');
    for (const entry of ['.git', '.data', '.env', 'node_modules']) expect(ignored).toContain(entry);
  });

  it('needs no devDependency at run time', () => {
    // The API and worker, the workflow bundle the worker builds at start, and the CLI (`bin/payments.js`).
    const used = runtimePackages([
      'src/process/main.ts',
      'workflows/index.ts',
      'bin/payments.js',
      'bin/service.js',
    ]);
    const installed = { ...pkg.dependencies, ...pkg.optionalDependencies };
    const missing = [...used].filter(([name]) => !(name in installed)).map(([name, by]) => `${name} (${by})`);
    expect(missing).toEqual([]);
  });
});

/** Packages the given files import at run time, following relative imports; name → first importer. */
function runtimePackages(entries: string[]): Map<string, string> {
  const packages = new Map<string, string>();
  const seen = new Set<string>();
  const queue = [...entries];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    if (!/\.[cm]?[jt]s$/.test(file)) continue;
    const source = ts.createSourceFile(file, read(file), ts.ScriptTarget.Latest);
    for (const specifier of runtimeImports(source)) {
      if (specifier.startsWith('.')) queue.push(resolveLocal(file, specifier));
      else if (!specifier.startsWith('node:') && !builtinModules.includes(specifier)) {
        const name = specifier
          .split('/')
          .slice(0, specifier.startsWith('@') ? 2 : 1)
          .join('/');
        if (!packages.has(name)) packages.set(name, file);
      }
    }
  }
  return packages;
}

/** Static imports and re-exports that are not type-only, and `import('…')` with a literal. */
function runtimeImports(source: ts.SourceFile): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly) {
      found.push((node.moduleSpecifier as ts.StringLiteral).text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && !node.isTypeOnly) {
      found.push((node.moduleSpecifier as ts.StringLiteral).text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function resolveLocal(from: string, specifier: string): string {
  const base = join(dirname(from), specifier);
  const candidates = [base, `${base}.ts`, join(base, 'index.ts')];
  const file = candidates.find((c) => existsSync(join(root, c)) && statSync(join(root, c)).isFile());
  if (!file) throw new Error(`cannot resolve ${specifier} from ${from}`);
  return file;
}
