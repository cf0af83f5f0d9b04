// The floors `npm run bench` compares each path with, served by one child process (bench/run.ts):
//   GET  /empty     an empty Fastify route
//   GET  /pk/:id    one primary-key select through `pg`, behind Fastify
//   POST /noop      a no-op workflow started by update-with-start, on the same Temporal server, with a
//                   worker built as the service builds its own (same SDK defaults and payload codec)
// Reads DATABASE_URL, TEMPORAL_ADDRESS, PAYLOAD_KEYS and PORT; prints "ready" when it listens.
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import pg from 'pg';
import { Client, Connection, WithStartWorkflowOperation } from '@temporalio/client';
import { NativeConnection, Runtime, DefaultLogger, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { payloadCodec } from '../../src/temporal/client';
import { answerUpdate } from './noop-workflow';

const env = process.env as Record<string, string>;
const payloadKeys = env.PAYLOAD_KEYS ?? '';
const taskQueue = `bench-noop-${process.pid}`;
const codec = payloadCodec({ PAYLOAD_KEYS: payloadKeys });

Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('ERROR') });
const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 10 });
const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
const client = new Client({ connection, dataConverter: { payloadCodecs: [codec] } });
const worker = await Worker.create({
  connection: await NativeConnection.connect({ address: env.TEMPORAL_ADDRESS }),
  taskQueue,
  workflowBundle: await bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('./noop-workflow.ts', import.meta.url)),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
  }),
  dataConverter: { payloadCodecs: [codec] },
});
void worker.run();

const app = Fastify({ logger: false });
app.get('/empty', async () => ({ ok: true }));
app.get<{ Params: { id: string } }>('/pk/:id', async (request) => {
  const { rows } = await pool.query('select * from transactions where id = $1', [request.params.id]);
  return rows[0] ?? null;
});
app.post('/noop', async () => {
  const start = new WithStartWorkflowOperation('noop', {
    workflowId: `noop-${randomUUID()}`,
    taskQueue,
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
  return client.workflow.executeUpdateWithStart(answerUpdate, { startWorkflowOperation: start });
});
await app.listen({ host: '127.0.0.1', port: Number(env.PORT) });
process.stdout.write('ready\n');
process.once('SIGTERM', () => {
  worker.shutdown();
  void app.close().then(() => process.exit(0));
});
