/**
 * Every relative link in the repository's Markdown leads somewhere: the file exists, and a `#fragment`
 * names a heading of that file as GitHub writes its anchor. A section renamed or cut away breaks the
 * links to it here, not for a reader.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');

/** The tracked Markdown files, from the repository's root. */
const markdown = execFileSync('git', ['ls-files', '*.md'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((file) => file !== '' && !file.startsWith('test/fixtures/'));

/** Text outside fenced blocks and inline code, where links are links. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a file's headings; a repeated heading gets `-1`, `-2` … as on GitHub. */
function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  const text = readFileSync(join(root, file), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  for (const [, heading] of text.matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const base = slug(heading!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Each relative link of a file: where it points, and the fragment if any. */
function linksOf(file: string): { target: string; fragment?: string }[] {
  const links = [];
  for (const [, href] of prose(readFileSync(join(root, file), 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(href!)) continue;
    const [path, fragment] = href!.split('#');
    links.push({ target: path ? join(dirname(file), path) : file, fragment });
  }
  return links;
}

describe('links between the repository’s Markdown files', () => {
  it('finds Markdown to check', () => {
    expect(markdown).toContain('README.md');
    expect(markdown).toContain('bench/README.md');
    expect(markdown.filter((file) => file.startsWith('docs/')).length).toBeGreaterThan(5);
  });

  it.each(markdown)('%s links only to files and headings that exist', (file) => {
    const broken: string[] = [];
    for (const { target, fragment } of linksOf(file)) {
      if (!existsSync(join(root, target))) {
        broken.push(`${target} (no such file)`);
        continue;
      }
      if (fragment && target.endsWith('.md') && statSync(join(root, target)).isFile()) {
        if (!anchorsOf(target).has(fragment)) broken.push(`${target}#${fragment} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('makes the anchors GitHub makes', () => {
    expect(slug('Soak (`npm run bench:soak`)')).toBe('soak-npm-run-benchsoak');
    expect(slug("Where a transaction's CPU goes")).toBe('where-a-transactions-cpu-goes');
    expect(slug('A steady state measured (2026-12-05, later still)')).toBe(
      'a-steady-state-measured-2026-12-05-later-still',
    );
  });
});
