import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** A fenced code block of a Markdown file, and what the doc test does with it. */
export interface Block {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  code: string;
  /** Why it is not run, from a `<!-- doc-test: not run: … -->` line just above it. */
  notRun?: string;
}

/** The languages whose blocks are examples a reader pastes; other fences (text, diagrams) are not run. */
export const RUNNABLE = ['sh', 'ts', 'js', 'json'];

/** The documents whose examples must run: the README and every page of docs/. */
export function documents(root: string): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => join('docs', name));
  return ['README.md', ...docs];
}

/** The fenced blocks of one Markdown file, in order. */
export function blocksOf(root: string, file: string): Block[] {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const code: string[] = [];
    for (i += 1; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) code.push(lines[i]!);
    // Prettier keeps a blank line between the marker and the fence.
    let above = start - 1;
    while (above >= 0 && lines[above]!.trim() === '') above -= 1;
    const before = lines[above] ?? '';
    const notRun = /^<!-- doc-test: not run: (.+) -->$/.exec(before)?.[1];
    blocks.push({
      file,
      line: start + 1,
      lang: open[1] ?? '',
      code: code.join('\n'),
      ...(notRun ? { notRun } : {}),
    });
  }
  return blocks;
}
