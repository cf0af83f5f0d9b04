import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain Node script of the toolchain, without types
import { noiseFilter } from '../../scripts/quiet.mjs';

const kept = (lines: string[]): string[] => {
  const keep = (noiseFilter as () => (line: string) => boolean)();
  return lines.filter((line) => keep(line));
};

const panic = [
  "thread 'tokio-runtime-worker' (13434) panicked at sdk-core/crates/sdk-core/src/worker/activities/local_activities.rs:997:33:",
  'receive half not dropped: SendError { .. }',
  'note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace',
];

describe('the noise npm test leaves out', () => {
  it('drops the known SDK panic, with or without the thread id, and the test server SLF4J notice', () => {
    expect(
      kept([
        ...panic,
        panic[0]!.replace(' (13434)', ''),
        ...panic.slice(1),
        'SLF4J: Failed to load class "org.slf4j.impl.StaticLoggerBinder".',
        'SLF4J: Defaulting to no-operation (NOP) logger implementation',
        'SLF4J: See http://www.slf4j.org/codes.html#StaticLoggerBinder for further details.',
        'time=2026-11-25T12:00:00Z level=ERROR msg="Persistent store operation failure" error="context canceled"',
        'time=2026-11-25T12:24:43.599 level=ERROR msg="Update workflow execution operation failed." shard-id=1 store-operation=update-wf-execution error="context canceled"',
      ]),
    ).toEqual([]);
  });

  it('keeps every other line, a panic elsewhere and what interrupts a known block', () => {
    const other = "thread 'main' panicked at src/lib.rs:1:1:";
    expect(
      kept([' ✓ test/unit/amounts.test.ts', other, panic[0]!, 'Error: a real failure', panic[1]!]),
    ).toEqual([' ✓ test/unit/amounts.test.ts', other, 'Error: a real failure', panic[1]!]);
    expect(kept(['level=ERROR msg="Persistent store operation failure" error="deadlock"'])).toHaveLength(1);
  });
});
