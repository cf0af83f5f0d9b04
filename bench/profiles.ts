/**
 * Summarises the V8 CPU profiles `npm run bench:capacity` writes with `CAPACITY_PROFILE=1` (one folder per
 * process, every thread's profile in it): what each process spends its CPU on, per transaction. A sample
 * counts toward every category found on its stack (inclusive: the data converter inside an activity counts
 * for both), so the categories overlap and do not add up to the whole. Shares are of the profile's busy
 * samples; `msPerTransaction` scales them by the CPU the bench measured for that process per transaction.
 *
 *   node --import tsx bench/profiles.ts DIR [MS_PER_TRANSACTION]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** What a frame is for, by where its code lives; the first match names it. */
const CATEGORIES: [string, (frame: CallFrame) => boolean][] = [
  [
    'workflow sandbox (vm calls, activations, promise hooks)',
    (f) =>
      /@temporalio\/(worker\/lib\/workflow|workflow)\//.test(f.url) ||
      // The promise hook's stack capture calls these helpers of @temporalio/common.
      /^cutoff(Structured)?StackTrace$/.test(f.functionName) ||
      f.functionName === 'runInContext' ||
      f.url.includes('workflow-bundle'),
  ],
  [
    'Temporal core bridge (Rust: gRPC, polling, state machines)',
    (f) => f.url.includes('@temporalio/core-bridge'),
  ],
  ['worker-thread messages (postMessage, structured clone)', (f) => f.functionName === 'postMessage'],
  [
    'payload codec (AES-256-GCM, keys)',
    (f) => /src\/ciphers\//.test(f.url) || f.url.startsWith('node:internal/crypto'),
  ],
  ['data converter and protobuf', (f) => /@temporalio\/(common|proto)\/|protobufjs|long\//.test(f.url)],
  [
    'tracing (OpenTelemetry)',
    (f) => f.url.includes('@opentelemetry') || f.url.includes('interceptors-opentelemetry'),
  ],
  [
    'HTTP edge (Fastify, routing, light-my-request)',
    (f) => /node_modules\/(fastify|@fastify|find-my-way|avvio)/.test(f.url),
  ],
  ['validation (zod)', (f) => f.url.includes('node_modules/zod')],
  ['SQL builder (drizzle)', (f) => f.url.includes('drizzle-orm')],
  ['Postgres driver (pg)', (f) => /node_modules\/(pg|pg-protocol|pg-pool|pg-types)\//.test(f.url)],
  ['logging (pino)', (f) => /node_modules\/(pino|pino-std-serializers|sonic-boom)/.test(f.url)],
  ['gRPC client (@grpc/grpc-js)', (f) => f.url.includes('@grpc/grpc-js')],
  ['JSON', (f) => f.url === '' && /^(parse|stringify|JSON\.)/.test(f.functionName)],
  ['activities (ours)', (f) => /\/activities\//.test(f.url)],
  ['garbage collector', (f) => f.functionName === '(garbage collector)'],
];

function summarise(dir: string) {
  const byCategory = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let busy = 0;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile;
    const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    for (let i = 0; i < profile.samples.length; i += 1) {
      const dt = profile.timeDeltas[i] ?? 0;
      let id: number | undefined = profile.samples[i]!;
      if (nodes.get(id)!.callFrame.functionName === '(idle)') continue;
      busy += dt;
      const categories = new Set<string>();
      const functions = new Set<string>();
      for (; id !== undefined; id = parent.get(id)) {
        const frame = nodes.get(id)!.callFrame;
        const category = CATEGORIES.find(([, matches]) => matches(frame))?.[0];
        if (category) categories.add(category);
        if (frame.functionName && !frame.functionName.startsWith('(')) {
          const where = frame.url.replace(/^file:\/\//, '').replace(/.*node_modules\//, '');
          functions.add(
            `${frame.functionName} ${where.split('/').slice(-3).join('/')}:${frame.lineNumber + 1}`,
          );
        }
      }
      for (const c of categories) byCategory.set(c, (byCategory.get(c) ?? 0) + dt);
      for (const f of functions) byFunction.set(f, (byFunction.get(f) ?? 0) + dt);
    }
  }
  return { busy, byCategory, byFunction };
}

const [dir, msArg] = process.argv.slice(2);
if (!dir) {
  process.stderr.write('usage: node --import tsx bench/profiles.ts DIR [MS_PER_TRANSACTION]\n');
  process.exit(2);
}
const ms = msArg ? Number(msArg) : undefined;
const { busy, byCategory, byFunction } = summarise(dir);
const line = (name: string, micros: number) =>
  `  ${((100 * micros) / busy).toFixed(1).padStart(5)} %${ms ? `  ${((ms * micros) / busy).toFixed(1).padStart(5)} ms/tx` : ''}  ${name}`;
const top = (map: Map<string, number>, n: number) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, micros]) => line(name, micros));
process.stdout.write(
  [
    `${dir}: ${(busy / 1e6).toFixed(1)} s of busy samples`,
    'by what it is for (inclusive):',
    ...top(byCategory, CATEGORIES.length),
    'top functions (inclusive):',
    ...top(byFunction, 25),
    '',
  ].join('\n'),
);
