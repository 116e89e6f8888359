// The README is a front door and docs/ the rooms behind it: every relative link in README.md and in each
// document under docs/ reaches a file that exists (and, with a #anchor, a heading of it); docs/README.md lists
// every document once; the README stays one page (250 lines at most) that opens with what a new user runs.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { markdownFiles, problem, ROOT, read, relativeLinks, slug, withoutFences } from './support/markdown.ts';

const README_MAX_LINES = 250;

/** What docs/ holds at its top level: each document, each other file, each folder (with a trailing slash). */
const docsEntries = readdirSync(join(ROOT, 'docs'), { withFileTypes: true }).map((e) => `docs/${e.name}${e.isDirectory() ? '/' : ''}`);

/** The lines of docs/README.md whose links name the entry (a folder: itself or anything in it). */
function indexLinesNaming(entry: string): string[] {
  const links = relativeLinks('docs/README.md');
  const names = (line: string) =>
    links.some((l) => line.includes(`](${l.raw})`) && (entry.endsWith('/') ? `${l.target}/`.startsWith(entry) : l.target === entry));
  return read('docs/README.md').split('\n').filter(names);
}

describe('links in README.md and docs/', () => {
  it('checks README.md and every document under docs/', () => {
    for (const f of ['README.md', 'docs/README.md', 'docs/settings.md', 'docs/commands.md', 'docs/benchmarks.md']) expect(markdownFiles).toContain(f);
  });

  it('every relative link points at a file that exists, and its #anchor at a heading of that file', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of markdownFiles)
      for (const l of relativeLinks(file)) {
        checked++;
        const p = problem(l.target, l.anchor);
        if (p) broken.push(`${file}: (${l.raw}): ${p}`);
      }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(100);
  });

  it('resolves a link from the folder of the document it is in', () => {
    expect(relativeLinks('docs/README.md')).toContainEqual({ raw: 'settings.md', target: 'docs/settings.md', anchor: undefined });
    expect(relativeLinks('README.md')).toContainEqual({ raw: 'docs/settings.md', target: 'docs/settings.md', anchor: undefined });
  });

  it('slugs headings as GitHub does', () => {
    expect(slug('Transitions after HELD')).toBe('transitions-after-held');
    expect(slug('Stale snapshots by occurredAt')).toBe('stale-snapshots-by-occurredat');
    expect(slug('`document.*` bodies (v1)')).toBe('document-bodies-v1');
    expect(slug('Node.js 24, pinned by the project')).toBe('nodejs-24-pinned-by-the-project');
    expect(slug('`compose.yaml`')).toBe('composeyaml');
  });

  it('finds a broken anchor', () => {
    expect(problem('docs/settings.md', 'no-such-heading')).toBe('no heading #no-such-heading in docs/settings.md');
    expect(problem('docs/no-such-document.md', undefined)).toBe('no such file');
  });
});

describe('the docs index', () => {
  it('docs/README.md lists every document, file and folder of docs/ on one line each', () => {
    const entries = docsEntries.filter((e) => e !== 'docs/README.md');
    expect(entries.length).toBeGreaterThan(15);
    const notOnce = entries.map((e) => ({ entry: e, lines: indexLinesNaming(e).length })).filter((e) => e.lines !== 1);
    expect(notOnce).toEqual([]);
  });
});

describe('the README', () => {
  const readme = read('README.md');

  it(`is one page: at most ${README_MAX_LINES} lines`, () => {
    expect(readme.trimEnd().split('\n').length).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it('shows first what a new user runs: install and start, then install and test', () => {
    const lines = readme.split('\n');
    expect(lines[0]).toBe('# emr-bridge');
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)!;
    expect(readme.slice(0, firstBlock.index).trim()).toBe('# emr-bridge');
    const commands = firstBlock[1]!
      .trim()
      .split('\n')
      .map((l) => l.replace(/\s+#.*$/, ''));
    expect(commands).toEqual(['npm ci && npm start', 'npm ci && npm test']);
  });

  it('links to the docs index and to every document under docs/', () => {
    const linked = new Set(relativeLinks('README.md').map((l) => l.target));
    const documents = docsEntries.filter((e) => e.endsWith('.md'));
    expect(documents.filter((d) => !linked.has(d))).toEqual([]);
    expect(linked).toContain('docs/README.md');
  });

  it('keeps its reference parts in docs/: no settings table and no command reference of its own', () => {
    const prose = withoutFences(readme);
    expect(prose).not.toMatch(/^\| `[A-Z][A-Z0-9_]+` \|/m);
    expect(readme).not.toContain('<!-- commands:begin');
  });
});
