import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');

it("docs/testing.md's example is the time-skipping test the suite runs", () => {
  const guide = readFileSync(resolve(root, 'docs/testing.md'), 'utf8');
  const example = /```ts\n([\s\S]*?)```/.exec(guide)?.[1];
  expect(example).toBe(readFileSync(resolve(root, 'test/workflows/guide.timeskipping.test.ts'), 'utf8'));
});
