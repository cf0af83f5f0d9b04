import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
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

  it.each(histories)('%s', async (file) => {
    const history = proto.temporal.api.history.v1.History.decode(readFileSync(`${historiesDir}/${file}`));
    await Worker.runReplayHistory(
      {
        workflowBundle: { codePath: inject('workflowBundlePath') },
        dataConverter: dataConverter({ PAYLOAD_KEYS: REPLAY_PAYLOAD_KEYS }),
      },
      history,
      file.replace(/\.history$/, ''),
    );
  });
});
