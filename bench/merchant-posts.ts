/**
 * What a webhook's POST costs the worker's CPU, with the connection kept between deliveries
 * (`MerchantConnections`, src/net/post.ts) and with a new connection each time (as before it): over plain
 * HTTP and over TLS, to an endpoint on loopback in a process of its own, so only the sender is measured.
 *
 *   node --import tsx bench/merchant-posts.ts [POSTS]
 *
 * The endpoint's certificate is made for the run with `openssl` and trusted through
 * `NODE_EXTRA_CA_CERTS`, which Node reads at start: the script runs itself again with it set.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { MerchantConnections, postToMerchant } from '../src/net/post';

const POSTS = Number(process.argv[2] ?? 400);
const SERVER = `
const http = require('node:http'), https = require('node:https'), fs = require('node:fs');
const answer = (req, res) => { req.resume(); req.on('end', () => res.writeHead(200).end('ok')); };
const plain = http.createServer(answer);
const tls = https.createServer({ key: fs.readFileSync(process.argv[1]), cert: fs.readFileSync(process.argv[2]) }, answer);
plain.listen(0, '127.0.0.1', () => tls.listen(0, '127.0.0.1', () =>
  process.stdout.write(JSON.stringify({ http: plain.address().port, https: tls.address().port }) + '\\n')));
`;

async function measure(urls: { http: string; https: string }) {
  const body = JSON.stringify({ status: 'SUCCESS', event_id: 'evt_bench', amount: '10.00' });
  const policy = { mode: 'test' as const, allowPrivate: false };
  const rows: string[] = [];
  for (const [name, url] of Object.entries(urls)) {
    for (const kept of [true, false]) {
      let connections = new MerchantConnections();
      const post = async () => {
        if (!kept) connections = new MerchantConnections();
        const status = await postToMerchant(url, {
          headers: {},
          body,
          timeoutMs: 10_000,
          policy,
          connections,
        });
        if (status !== 200) throw new Error(`HTTP ${status}`);
        if (!kept) connections.close();
      };
      for (let i = 0; i < 20; i++) await post(); // warm-up
      const cpu = process.cpuUsage();
      const started = performance.now();
      for (let i = 0; i < POSTS; i++) await post();
      const used = process.cpuUsage(cpu);
      const wall = performance.now() - started;
      connections.close();
      rows.push(
        `| ${name} | ${kept ? 'kept' : 'new each time'} | ${((used.user + used.system) / 1000 / POSTS).toFixed(3)} | ${(wall / POSTS).toFixed(2)} |`,
      );
    }
  }
  process.stdout.write(
    [
      `${POSTS} sequential POSTs each, sender's CPU (user + system) and wall time per POST:`,
      '| Transport | Connection | CPU ms per POST | Wall ms per POST |',
      '| --- | --- | --- | --- |',
      ...rows,
      '',
    ].join('\n'),
  );
}

if (process.env.MERCHANT_POSTS_URLS) {
  await measure(JSON.parse(process.env.MERCHANT_POSTS_URLS) as { http: string; https: string });
} else {
  const dir = mkdtempSync(join(tmpdir(), 'payments-merchant-posts-'));
  const [key, cert] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  );
  const server = spawn(process.execPath, ['-e', SERVER, key, cert], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const [line] = (await once(server.stdout, 'data')) as [Buffer];
    const ports = JSON.parse(line.toString()) as { http: number; https: number };
    const urls = {
      http: `http://127.0.0.1:${ports.http}/hook`,
      https: `https://127.0.0.1:${ports.https}/hook`,
    };
    const child = spawn(process.execPath, ['--import', 'tsx', import.meta.filename, String(POSTS)], {
      stdio: 'inherit',
      env: { ...process.env, NODE_EXTRA_CA_CERTS: cert, MERCHANT_POSTS_URLS: JSON.stringify(urls) },
    });
    const [code] = (await once(child, 'exit')) as [number | null];
    process.exitCode = code ?? 1;
  } finally {
    server.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}
