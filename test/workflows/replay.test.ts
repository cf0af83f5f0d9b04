import { readdirSync, readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { dataConverter } from '../../src/temporal/client';
import { REPLAY_PAYLOAD_KEYS, historiesDir } from '../replay/fixture-keys';

/**
 * Replays every recorded history (test/replay/histories, `npm run record:histories`) against the current
 * workflow code: a change that would break workflows already running in production fails here, before a
 * deploy does (docs/architecture.md, changing a workflow safely).
 */
const histories = readdirSync(historiesDir)
  .filter((file) => file.endsWith('.history'))
  .sort();

describe('recorded workflow histories replay on the current code', () => {
  it('has histories of every workflow kind, running and finished', () => {
    expect(histories.length).toBeGreaterThanOrEqual(18);
  });

  // One replay worker for them all (a worker each cost about a third of a second of CPU): each history's
  // result is its own test below.
  const results = new Map<string, Error | undefined>();
  beforeAll(async () => {
    const iterable = histories.map((file) => ({
      workflowId: file.replace(/\.history$/, ''),
      history: proto.temporal.api.history.v1.History.decode(readFileSync(`${historiesDir}/${file}`)),
    }));
    for await (const result of Worker.runReplayHistories(
      {
        workflowBundle: { codePath: inject('workflowBundlePath') },
        dataConverter: dataConverter({ PAYLOAD_KEYS: REPLAY_PAYLOAD_KEYS }),
      },
      iterable,
    ))
      results.set(result.workflowId, result.error);
  }, 120_000);

  it.each(histories)('%s', (file) => {
    const workflowId = file.replace(/\.history$/, '');
    expect(results.has(workflowId), `${file} was not replayed`).toBe(true);
    const error = results.get(workflowId);
    if (error) throw error;
  });
});
