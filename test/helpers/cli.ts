import { vi } from 'vitest';
import { runCli } from '../../src/cli/index';
import type { TestEnv } from './env';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `npx payments ...` in process against a test environment, capturing what it prints. */
export async function runCliIn(env: TestEnv, ...argv: string[]): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const out = vi
    .spyOn(process.stdout, 'write')
    .mockImplementation((chunk) => ((stdout += String(chunk)), true));
  const err = vi
    .spyOn(process.stderr, 'write')
    .mockImplementation((chunk) => ((stderr += String(chunk)), true));
  try {
    const code = await runCli(argv, {
      DATABASE_URL: env.config.DATABASE_URL,
      MASTER_KEY: env.config.MASTER_KEY,
      PAYLOAD_KEYS: env.config.PAYLOAD_KEYS,
      TEMPORAL_ADDRESS: env.config.TEMPORAL_ADDRESS,
      TEMPORAL_TASK_QUEUE: env.config.TEMPORAL_TASK_QUEUE,
      TEMPORAL_UI_URL: 'http://ui.test',
    });
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}
