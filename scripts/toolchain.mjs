// Installs and locates the external tools the service and its tests need: the Temporal CLI (dev server),
// the Java time-skipping test server and Chromium. Everything is cached under ~/.cache/payments, keyed by
// version, so only the first run pays for it. Plain Node (no dependencies): it runs before `npm install`.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync, renameSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const TEMPORAL_CLI_VERSION = '1.5.1';
export const TEST_SERVER_VERSION = '1.38.0';

export const cacheRoot = process.env.PAYMENTS_CACHE_DIR ?? join(homedir(), '.cache', 'payments');

function log(message) {
  process.stderr.write(`[toolchain] ${message}\n`);
}

function run(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    let output = '';
    const onData = (chunk) => {
      output += chunk;
      if (options.progress) options.progress(String(chunk));
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(output)
        : reject(new Error(`${command} ${args.join(' ')} exited with ${code}:\n${output.slice(-4000)}`)),
    );
  });
}

function onPath(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).stdout.trim() || undefined;
}

/** Path of a `temporal` CLI binary: TEMPORAL_CLI_PATH, else one built from the Go module proxy and cached. */
export async function ensureTemporalCli() {
  if (process.env.TEMPORAL_CLI_PATH) return process.env.TEMPORAL_CLI_PATH;
  const dir = join(cacheRoot, `temporal-cli-${TEMPORAL_CLI_VERSION}`);
  const binary = join(dir, 'temporal');
  if (existsSync(binary)) return binary;
  if (!onPath('go')) throw new Error('Go is needed to build the Temporal CLI (or set TEMPORAL_CLI_PATH).');
  mkdirSync(dir, { recursive: true });
  log(`building the Temporal CLI ${TEMPORAL_CLI_VERSION} with Go (first run only, a few minutes)...`);
  let modules = 0;
  const started = Date.now();
  const timer = setInterval(
    () => log(`  still building: ${modules} modules fetched, ${Math.round((Date.now() - started) / 1000)} s`),
    15_000,
  );
  try {
    await run('go', ['install', `github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`], {
      cwd: dir,
      env: { ...process.env, GOBIN: dir, GOFLAGS: '-mod=mod' },
      progress: (text) => {
        modules += (text.match(/go: downloading/g) ?? []).length;
      },
    });
  } finally {
    clearInterval(timer);
  }
  log(`built ${binary} in ${Math.round((Date.now() - started) / 1000)} s`);
  return binary;
}

/** The real Temporal server, for the cluster test (docs/reliability.md, the production topology). */
export const TEMPORAL_SERVER_VERSION = '1.29.1';

/**
 * The Temporal server (`cmd/server`) and its SQL schema tool (`cmd/tools/sql`, which carries the schema
 * files), built from the Go module proxy once and cached. TEMPORAL_SERVER_DIR names a directory holding
 * the two binaries (`server`, `sql`) instead.
 */
export async function ensureTemporalServer() {
  const dir =
    process.env.TEMPORAL_SERVER_DIR ?? join(cacheRoot, `temporal-server-${TEMPORAL_SERVER_VERSION}`);
  const tools = { server: join(dir, 'server'), sqlTool: join(dir, 'sql') };
  if (existsSync(tools.server) && existsSync(tools.sqlTool)) return tools;
  if (process.env.TEMPORAL_SERVER_DIR)
    throw new Error(`TEMPORAL_SERVER_DIR=${dir} must hold the server and sql binaries.`);
  if (!onPath('go'))
    throw new Error('Go is needed to build the Temporal server (or set TEMPORAL_SERVER_DIR).');
  mkdirSync(dir, { recursive: true });
  log(`building the Temporal server ${TEMPORAL_SERVER_VERSION} with Go (first run only, a few minutes)...`);
  const started = Date.now();
  const timer = setInterval(
    () => log(`  still building the Temporal server: ${Math.round((Date.now() - started) / 1000)} s`),
    15_000,
  );
  try {
    await run(
      'go',
      [
        'install',
        `go.temporal.io/server/cmd/server@v${TEMPORAL_SERVER_VERSION}`,
        `go.temporal.io/server/cmd/tools/sql@v${TEMPORAL_SERVER_VERSION}`,
      ],
      { cwd: dir, env: { ...process.env, GOBIN: dir, GOFLAGS: '-mod=mod' } },
    );
  } finally {
    clearInterval(timer);
  }
  log(`built the Temporal server in ${dir} in ${Math.round((Date.now() - started) / 1000)} s`);
  return tools;
}

/** Stripe's official API mock, which checks every request against Stripe's published specification. */
const STRIPE_MOCK_VERSION = '0.203.0';

/** Path of the stripe-mock binary, built with Go from the module proxy once and cached. */
export async function ensureStripeMock() {
  if (process.env.STRIPE_MOCK_PATH) return process.env.STRIPE_MOCK_PATH;
  const dir = join(cacheRoot, `stripe-mock-${STRIPE_MOCK_VERSION}`);
  const binary = join(dir, 'stripe-mock');
  if (existsSync(binary)) return binary;
  if (!onPath('go')) throw new Error('Go is needed to build stripe-mock (or set STRIPE_MOCK_PATH).');
  mkdirSync(dir, { recursive: true });
  log(`building stripe-mock ${STRIPE_MOCK_VERSION} with Go (first run only, about a minute)...`);
  await run('go', ['install', `github.com/stripe/stripe-mock@v${STRIPE_MOCK_VERSION}`], {
    cwd: dir,
    env: { ...process.env, GOBIN: dir, GOFLAGS: '-mod=mod' },
  });
  return binary;
}

/**
 * Path of a wrapper script that starts the Java time-skipping test server: `<script> <port>
 * [--enable-time-skipping]`. The jar and its dependencies come from Maven Central through Maven.
 */
export async function ensureTestServer() {
  if (process.env.TEMPORAL_TEST_SERVER_PATH) return process.env.TEMPORAL_TEST_SERVER_PATH;
  const dir = join(cacheRoot, `temporal-test-server-${TEST_SERVER_VERSION}`);
  const wrapper = join(dir, 'temporal-test-server');
  if (existsSync(wrapper)) return wrapper;
  if (!onPath('mvn') || !onPath('java')) {
    throw new Error(
      'Java 17 and Maven are needed for the time-skipping test server (or set TEMPORAL_TEST_SERVER_PATH).',
    );
  }
  mkdirSync(dir, { recursive: true });
  log(`fetching the Temporal Java test server ${TEST_SERVER_VERSION} from Maven Central (first run only)...`);
  writeFileSync(
    join(dir, 'pom.xml'),
    `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.payments</groupId>
  <artifactId>temporal-test-server-runner</artifactId>
  <version>1</version>
  <dependencies>
    <dependency>
      <groupId>io.temporal</groupId>
      <artifactId>temporal-test-server</artifactId>
      <version>${TEST_SERVER_VERSION}</version>
    </dependency>
  </dependencies>
</project>
`,
  );
  let artifacts = 0;
  await run('mvn', ['-B', 'dependency:build-classpath', '-Dmdep.outputFile=classpath.txt'], {
    cwd: dir,
    progress: (text) => {
      const before = artifacts;
      artifacts += (text.match(/^Downloaded from/gm) ?? []).length;
      if (Math.floor(artifacts / 25) > Math.floor(before / 25)) log(`  ${artifacts} artifacts downloaded...`);
    },
  });
  log(`  ${artifacts} artifacts downloaded`);
  const classpath = readFileSync(join(dir, 'classpath.txt'), 'utf8').trim();
  const script = `#!/bin/sh
# Starts the Temporal Java test server: <port> [--enable-time-skipping]
exec java -cp '${classpath}' io.temporal.testserver.TestServer "$@"
`;
  writeFileSync(`${wrapper}.tmp`, script);
  chmodSync(`${wrapper}.tmp`, 0o755);
  renameSync(`${wrapper}.tmp`, wrapper);
  log(`test server ready: ${wrapper}`);
  return wrapper;
}

/** Path of a Chromium binary for browser tests, installing Debian's package when absent. */
export async function ensureChromium() {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  const path = '/usr/bin/chromium';
  if (existsSync(path)) return path;
  if (!onPath('apt-get')) throw new Error('Chromium is missing: install it or set CHROMIUM_PATH.');
  log('installing Chromium from Debian (first run only)...');
  const sudo = process.getuid?.() === 0 ? [] : ['sudo'];
  const apt = (args) => (sudo.length ? run('sudo', ['apt-get', ...args]) : run('apt-get', args));
  await apt(['update', '-qq']);
  await apt(['install', '-y', '-qq', '--no-install-recommends', 'chromium']);
  return path;
}
