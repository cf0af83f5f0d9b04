import type { Database } from '../db/client';
import { cliConfig, print, type CliContext, type Command } from './context';
import { CliError } from './errors';
import { merchantTools } from './merchant-tools';
import { runTemporal } from './temporal';
import { readFileSync } from 'node:fs';

export { CliError };

const USAGE = `Usage: payments <command>

  merchants create --name NAME [--wallet CUR:AMOUNT]... [--json]
  merchants rotate-keys --merchant ID [--overlap-hours N] [--json]
  merchants rotate-webhook-secret --merchant ID [--overlap-hours N] [--json]   (a webhook secret of its own)
  merchants settings --merchant ID [--tolerance CUR:AMOUNT]... [--tolerance-fiat AMOUNT|none]
                     [--underpaid fail|accept] [--overpaid keep|refund] [--json]
  merchants fees --merchant ID [--mode test|live --kind KIND --currency CUR --percent P --fixed MINOR] [--json]
  terminals add --merchant ID --mode test|live --kind KIND [--connector NAME] [--priority N] [--descriptor TEXT]
                [--secret-key sk_test_…]   (stripe: the account's secret key, stored encrypted)
  chains add --mode test|live --network NETWORK --rpc-url URL [--confirmations N] [--token CODE=0xCONTRACT]...
             [--seed-hex HEX]   (an EVM node watched for deposits; a fresh HD seed unless given)
  chains list [--json]
  chains retire CHAIN_NODE_ID [--force]   (stop watching a replaced node once its transactions have closed)
  wallets credit --wallet ID --amount MINOR [--reference REF] [--actor NAME]
  wallets statement WALLET_ID [--json]
  webhooks redeliver TRANSACTION_ID|EVENT_ID [--actor NAME]
  webhooks events --merchant ID --mode test|live [--transaction ID] [--delivered true|false] [--limit N] [--json]
  ops stuck [--older-than 15m] [--kind KIND] [--json]
  ops show TRANSACTION_ID|ORDER_ID [--merchant ID] [--json]   (an order id as the status endpoint takes it)
  ops retry TRANSACTION_ID|ORDER_ID [--merchant ID] [--actor NAME]
  ops fail TRANSACTION_ID|ORDER_ID [--merchant ID] --reason TEXT [--actor NAME]
  ops chargeback TRANSACTION_ID|ORDER_ID [--merchant ID] [--reason TEXT] [--actor NAME]
  recon run [--source SOURCE]... [--since ISO] [--until ISO] [--actor NAME] [--json]
                                   (reconciles now and waits; the schedule runs every 15 minutes)
  recon list [--state open|acknowledged|resolved|accepted] [--kind KIND] [--source SOURCE] [--json]
  recon show BREAK_ID [--json]
  recon ack BREAK_ID [--actor NAME]
  recon accept BREAK_ID --reason TEXT [--actor NAME]
  recon runs [--json]
  templates add --merchant ID --mode test|live --name NAME --redirect-url URL [--webhook-url URL]
                [--screenshot-url URL] [--json]   (a payment page template for payment links)
  templates list --merchant ID --mode test|live [--json]
  templates links --merchant ID --mode test|live [--json]   (the latest payment links and their state)
  db migrate
  temporal ARGS...   the Temporal CLI of \`npm run dev\`, on its server, payloads decoded through the codec
                     (for example: temporal workflow show --workflow-id PA…)

Merchant tools (no configuration needed):
  encrypt --key ENCRYPTION_KEY [--data JSON | --file F]      (else stdin) prints the body {"payload": …}
  decrypt --key ENCRYPTION_KEY [--data PAYLOAD | --file F]   prints the fields; takes the body or the payload
  webhooks verify --secret WEBHOOK_SECRET --id EVT --timestamp T --signature "v1,…" [--hash HEX]
                  [--data BODY | --file F] [--tolerance 300]   exit status 1 unless it verifies

Reads the same configuration as the service: DATABASE_URL and MASTER_KEY (PAYLOAD_KEYS and
TEMPORAL_ADDRESS for commands that reach Temporal), or the running \`npm run dev\` instance when unset.`;

type Commands = Record<string, Command>;

/** Each group's commands, loaded when the group is asked for: a call imports what its command needs only. */
const groups: Record<string, () => Promise<Commands>> = {
  merchants: async () => (await import('./merchants')).commands,
  terminals: async () => (await import('./terminals')).commands,
  wallets: async () => (await import('./wallets')).commands,
  chains: async () => (await import('./chains')).commands,
  webhooks: async () => (await import('./webhooks')).commands,
  ops: async () => (await import('./ops')).commands,
  templates: async () => (await import('./templates')).commands,
  recon: async () => (await import('./recon')).commands,
  db: async () => ({
    async migrate(ctx) {
      const { runMigrations } = await import('../db/client');
      await runMigrations(ctx.database.pool);
      ctx.print({ migrated: true }, false);
    },
  }),
};

export async function runCli(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [group, name, ...rest] = argv;
  // The Temporal CLI of `npm run dev`, with every argument passed through as typed.
  if (group === 'temporal') {
    return runTemporal(argv.slice(1), env).catch((error: unknown) => {
      process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
      return 1;
    });
  }
  // The merchant's tools need no configuration: they run before any is read.
  // Only the tools' own names: `toString` and the like are no tool.
  const toolOf = (key: string) => (Object.hasOwn(merchantTools, key) ? merchantTools[key] : undefined);
  const single = toolOf(group ?? '');
  const tool = single ?? toolOf(`${group} ${name}`);
  if (tool && !argv.includes('--help')) {
    try {
      tool(single ? argv.slice(1) : rest, {
        stdin: () => readFileSync(0, 'utf8'),
        out: (text) => process.stdout.write(text),
      });
      return 0;
    } catch (error) {
      process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
      return 1;
    }
  }
  const commands = group && Object.hasOwn(groups, group) ? await groups[group]!() : undefined;
  const command = commands && name && Object.hasOwn(commands, name) ? commands[name] : undefined;
  const help = argv.includes('--help') || argv.includes('-h');
  if (!command || help) {
    process.stderr.write(`${USAGE}\n`);
    return group === undefined || help ? 0 : 1;
  }
  let database: Database | undefined;
  let client: import('@temporalio/client').Client | undefined;
  try {
    const config = cliConfig(env);
    const { createDatabase } = await import('../db/client');
    database = createDatabase(config.DATABASE_URL, 2);
    const ctx: CliContext = {
      config,
      database,
      print,
      temporal: async () => {
        if (client) return client;
        if (!config.PAYLOAD_KEYS) throw new CliError('PAYLOAD_KEYS is required to reach Temporal.');
        const { createTemporalClient } = await import('../temporal/client');
        client = await createTemporalClient({ ...config, PAYLOAD_KEYS: config.PAYLOAD_KEYS });
        return client;
      },
    };
    await command(ctx, rest);
    return 0;
  } catch (error) {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await client?.connection.close();
    await database?.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  void runCli(process.argv.slice(2)).then((code) => process.exit(code));
}
