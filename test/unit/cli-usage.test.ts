import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../src/cli/index';

afterEach(() => vi.restoreAllMocks());

describe('the payments command', () => {
  it('answers a name that is no command with its usage, whatever the name', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    for (const argv of [
      ['nothing'],
      ['__proto__', 'x'],
      ['toString'],
      ['merchants', '__proto__'],
      ['ops', 'valueOf'],
    ])
      expect(await runCli(argv, {}), argv.join(' ')).toBe(1);
    expect(stderr.mock.calls.every(([text]) => String(text).startsWith('Usage: payments <command>'))).toBe(
      true,
    );
    expect(await runCli([], {})).toBe(0);
  });
});
