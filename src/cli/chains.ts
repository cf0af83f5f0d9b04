import { parseArgs } from 'node:util';
import { ChainNodeError, retireChainNode } from '../chain/nodes';
import { listChainNodes } from '../chain/registration';
import { addChainNode } from '../chain/registration';
import { isMode } from '../lib/vocabulary';
import type { Command } from './context';
import { CliError } from './errors';

export const commands: Record<string, Command> = {
  /** Registers the node that watches one network for one mode (docs/connectors.md). */
  async add(ctx, argv) {
    const { values } = parseArgs({
      args: argv,
      options: {
        mode: { type: 'string' },
        network: { type: 'string' },
        'rpc-url': { type: 'string' },
        confirmations: { type: 'string' },
        token: { type: 'string', multiple: true },
        'seed-hex': { type: 'string' },
        json: { type: 'boolean' },
      },
    });
    if (!isMode(values.mode)) throw new CliError('--mode must be test or live');
    const network = values.network?.toUpperCase();
    if (!network) throw new CliError('--network is required (ETHEREUM, POLYGON, …)');
    const rpcUrl = values['rpc-url'];
    if (!rpcUrl || !/^https?:\/\//.test(rpcUrl))
      throw new CliError('--rpc-url must be the node’s http(s) URL');
    const confirmations = Number(values.confirmations ?? 12);
    const tokens: Record<string, string> = {};
    for (const token of values.token ?? []) {
      const [code, contract] = token.split('=');
      if (!code || !contract)
        throw new CliError(
          `--token must be CODE=CONTRACT (0x…; on TRON T…; on SOLANA the base58 mint), not ${token}`,
        );
      if (tokens[code]) throw new CliError(`--token ${code} is given twice`);
      tokens[code] = contract;
    }
    try {
      const added = await addChainNode(ctx.database.db, ctx.config.MASTER_KEY, {
        mode: values.mode,
        network,
        rpcUrl,
        confirmations,
        tokens,
        seedHex: values['seed-hex'],
      });
      ctx.print(
        {
          chain_node_id: added.id,
          treasury: added.treasury,
          watching_from_block: added.watchingFrom.toString(),
          note:
            network === 'BITCOIN'
              ? 'No treasury to fund: a refund spends the deposit’s own outputs, its network fee taken from the refunded amount (docs/connectors.md).'
              : network === 'TRON'
                ? 'TRON is watched for token deposits only: the service does not sign TRON transactions, so refunds and on-ramp sends there are not made from this treasury (docs/connectors.md).'
                : network === 'SOLANA'
                  ? 'Fund the treasury with SOL (every send’s fee, and the rent of a recipient’s token account) and with the tokens on-ramp sends pay; refunds leave from the deposit’s own token account (docs/connectors.md).'
                  : 'Fund the treasury with the network’s coin (gas) and its tokens: refunds and on-ramp sends leave from it.',
        },
        values.json ?? false,
      );
    } catch (error) {
      if (error instanceof ChainNodeError) throw new CliError(error.message);
      throw error;
    }
  },

  async list(ctx, argv) {
    const { values } = parseArgs({ args: argv, options: { json: { type: 'boolean' } } });
    ctx.print(await listChainNodes(ctx.database.db, ctx.config.MASTER_KEY), values.json ?? false);
  },

  /** Stops watching a node (a replaced one whose transactions have all closed). */
  async retire(ctx, argv) {
    const { positionals, values } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { force: { type: 'boolean' } },
    });
    const id = positionals[0];
    if (!id) throw new CliError('usage: chains retire CHAIN_NODE_ID [--force]');
    const outcome = await retireChainNode(ctx.database.db, id, values.force ?? false);
    if (outcome.kind === 'unknown') throw new CliError(`No watched node ${id}.`);
    if (outcome.kind === 'refused') throw new CliError(outcome.reason);
    ctx.print({ chain_node_id: id, retired: true }, false);
  },
};
