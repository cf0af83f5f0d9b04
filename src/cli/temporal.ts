import { spawn } from 'node:child_process';
import { readDevInstance } from '../platform/dev-instance';
import { CliError } from './errors';

/**
 * `npx payments temporal …`: the Temporal CLI that `npm run dev` runs, pointed at its server and at the
 * service's codec endpoint (payloads decoded), so `npx payments temporal workflow show --workflow-id PA…`
 * or `… workflow reset …` work as pasted. TEMPORAL_CLI_PATH, TEMPORAL_ADDRESS and TEMPORAL_CODEC_ENDPOINT
 * choose others; answers the CLI's exit status.
 */
export async function runTemporal(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const instance = readDevInstance();
  const binary = env.TEMPORAL_CLI_PATH ?? instance?.temporal_cli;
  if (!binary)
    throw new CliError(
      'No Temporal CLI known: start `npm run dev` (it records the one it runs), or set TEMPORAL_CLI_PATH.',
    );
  const child = spawn(binary, argv, {
    stdio: 'inherit',
    env: {
      ...env,
      ...(instance && !env.TEMPORAL_ADDRESS ? { TEMPORAL_ADDRESS: instance.temporal_address } : {}),
      ...(instance && !env.TEMPORAL_CODEC_ENDPOINT
        ? { TEMPORAL_CODEC_ENDPOINT: `${instance.api_url}/codec` }
        : {}),
    },
  });
  return new Promise((resolve, reject) => {
    child.on('error', (error) => reject(new CliError(`${binary}: ${error.message}`)));
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}
