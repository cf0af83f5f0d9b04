// Runs a command with its output filtered of noise known to be harmless, each kind with why it is.
// Everything else passes through as it comes.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/** Lines that are known noise, with the reason each is harmless. */
const NOISE = [
  {
    // Temporal SDK core (1.24): a local activity's start-to-close timer outlives the worker a test shut
    // down, and when it fires, its send to the stopped worker panics inside a background task. Nothing
    // waits on it any more; the process is unaffected. (Printed as a three-line block, below too.)
    // Rust prints the thread's id after its name from 1.88 on: `thread 'tokio-runtime-worker' (13434)`.
    test: /^thread '[^']*'(?: \(\d+\))? panicked at .*local_activities\.rs:\d+:\d+:$/,
    block: [/^receive half not dropped: SendError/, /^note: run with `RUST_BACKTRACE=1`/],
  },
  {
    // Temporal SDK core, on connecting to the Java time-skipping test server, which does not advertise
    // this capability: heartbeat details on failure, which no activity here uses.
    test: /Temporal Server 1\.16\.0 or newer is required to guarantee that the latest heartbeat details/,
  },
  {
    // The Java time-skipping test server ships no SLF4J binding, so its logging goes nowhere, which is what
    // the tests want; SLF4J says so in three lines as it starts.
    test: /^SLF4J: Failed to load class "org\.slf4j\.impl\.StaticLoggerBinder"\.$/,
    block: [
      /^SLF4J: Defaulting to no-operation \(NOP\) logger implementation$/,
      /^SLF4J: See http:\/\/www\.slf4j\.org\/codes\.html#StaticLoggerBinder/,
    ],
  },
  {
    // The Temporal dev server, while a test stops it (the suite's at its end, some tests' own mid-run): its
    // stores give up on the operations in flight with "context canceled" as it shuts down.
    test: /level=ERROR msg="[^"]*" .*error="context canceled"/,
  },
];

/**
 * A filter for one stream: answers, line by line, whether the line is kept. A known block is dropped whole
 * only when its lines follow in order; the first line that does not fit is judged afresh.
 */
export function noiseFilter() {
  let expect = [];
  return (line) => {
    if (expect.length > 0 && expect[0].test(line)) {
      expect = expect.slice(1);
      return false;
    }
    expect = [];
    const noise = NOISE.find((n) => n.test.test(line));
    if (noise) {
      expect = noise.block ?? [];
      return false;
    }
    return true;
  };
}

/** Filters one stream line by line into `out`. */
function filter(stream, out) {
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  const keep = noiseFilter();
  lines.on('line', (line) => {
    if (keep(line)) out.write(`${line}\n`);
  });
  return new Promise((resolve) => lines.on('close', resolve));
}

/** Runs `command args`, its stdout and stderr filtered; resolves with its exit status. */
export async function runQuietly(command, args, env) {
  const child = spawn(command, args, {
    stdio: ['inherit', 'pipe', 'pipe'],
    // Backtraces of the known panic above would be thirty lines each.
    env: { ...env, RUST_BACKTRACE: '0', ...(process.stdout.isTTY ? { FORCE_COLOR: '1' } : {}) },
  });
  const done = new Promise((resolve) => child.on('close', (code) => resolve(code ?? 1)));
  await Promise.all([filter(child.stdout, process.stdout), filter(child.stderr, process.stderr)]);
  return done;
}

/** Runs `command args` to the end, its stdout and stderr filtered into one text; resolves with both. */
export async function runCaptured(command, args, env) {
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...env, RUST_BACKTRACE: '0' },
  });
  const done = new Promise((resolve) => child.on('close', (code) => resolve(code ?? 1)));
  const chunks = [];
  const sink = { write: (text) => chunks.push(text) };
  await Promise.all([filter(child.stdout, sink), filter(child.stderr, sink)]);
  return { status: await done, output: chunks.join('') };
}
