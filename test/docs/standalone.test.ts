// The docs stand alone: a fork has only this repository, so README.md and docs/*.md cite nothing outside it,
// every relative link and every backticked repository path they name exists (a link's #anchor too), and
// every docs/<file>.md#anchor cited in src/ is a heading of that file (docs/decisions.md#… above all).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const markdownFiles = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** The text without fenced code blocks (``` or ~~~): what Markdown renders as prose, headings and links. */
function withoutFences(text: string): string {
  const out: string[] = [];
  let fence: string | undefined;
  for (const line of text.split('\n')) {
    const m = /^\s*(`{3,}|~{3,})/.exec(line);
    if (m) {
      if (!fence) fence = m[1]![0]!;
      else if (m[1]![0] === fence) fence = undefined;
      out.push('');
      continue;
    }
    out.push(fence ? '' : line);
  }
  return out.join('\n');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]*>/g, '')
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const anchorCache = new Map<string, Set<string>>();
/** Every anchor a Markdown file offers: its headings (repeats numbered as GitHub does) and explicit ids. */
function anchorsOf(file: string): Set<string> {
  const cached = anchorCache.get(file);
  if (cached) return cached;
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const text = withoutFences(read(file));
  for (const line of text.split('\n')) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (h) {
      const base = slug(h[1]!);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const a of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(a[1]!);
  }
  anchorCache.set(file, anchors);
  return anchors;
}

/** A repository path (from the root) exists; `problem` says why not, or that its anchor is missing. */
function problem(target: string, anchor: string | undefined): string | undefined {
  const full = join(ROOT, target);
  if (relative(ROOT, full).startsWith('..')) return 'points outside the repository';
  if (!existsSync(full)) return 'no such file';
  if (anchor && target.endsWith('.md') && statSync(full).isFile() && !anchorsOf(target).has(anchor)) return `no heading #${anchor} in ${target}`;
  return undefined;
}

/** Relative links `[text](path#anchor)` of a Markdown file, resolved from the repository root. */
function relativeLinks(file: string): { raw: string; target: string; anchor: string | undefined }[] {
  const text = withoutFences(read(file));
  const links = [];
  for (const m of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const raw = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(raw)) continue; // https:, mailto:
    const [path, anchor] = raw.split('#', 2) as [string, string | undefined];
    const target = path === '' ? file : relative(ROOT, resolve(ROOT, dirname(file), decodeURI(path)));
    links.push({ raw, target, anchor });
  }
  return links;
}

/** Backticked repository paths (`docs/….md`, `src/….ts`, `test/…`, folders), placeholders left out. */
function backtickedPaths(file: string): { raw: string; target: string; anchor: string | undefined }[] {
  const refs = [];
  for (const m of read(file).matchAll(/`((?:docs|src|test|db|bench|samples|bin)\/[^`\s]*)`/g)) {
    const raw = m[1]!;
    if (/[<>*…{}]/.test(raw)) continue; // src/emr/<your-emr>/index.ts, samples/schemas/*.json
    const [path, anchor] = raw.split('#', 2) as [string, string | undefined];
    refs.push({ raw, target: path, anchor });
  }
  return refs;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(`${dir}/${e.name}`) : e.name.endsWith('.ts') ? [`${dir}/${e.name}`] : [],
  );
}

describe('the docs stand alone', () => {
  it('finds the documents it checks', () => {
    for (const f of ['README.md', 'docs/service-interface.md', 'docs/decisions.md', 'docs/architecture.md']) expect(markdownFiles).toContain(f);
  });

  it('README.md and docs/*.md cite nothing outside the repository', () => {
    const found: string[] = [];
    for (const file of markdownFiles) {
      read(file)
        .split('\n')
        .forEach((line, i) => {
          for (const bad of ['../', 'shared/', 'CONTRACT']) if (line.includes(bad)) found.push(`${file}:${i + 1}: "${bad}" in ${line.trim().slice(0, 100)}`);
        });
    }
    expect(found).toEqual([]);
  });

  it('every relative link points at a file (and heading) that exists', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of markdownFiles)
      for (const l of relativeLinks(file)) {
        checked++;
        const p = problem(l.target, l.anchor);
        if (p) broken.push(`${file}: (${l.raw}): ${p}`);
      }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(10);
  });

  it('every backticked repository path exists', () => {
    const broken: string[] = [];
    for (const file of markdownFiles)
      for (const r of backtickedPaths(file)) {
        const p = problem(r.target, r.anchor);
        if (p) broken.push(`${file}: \`${r.raw}\`: ${p}`);
      }
    expect(broken).toEqual([]);
  });

  it('every docs/….md#anchor cited in src/ is a heading of that document', () => {
    const broken: string[] = [];
    const cited = new Set<string>();
    for (const file of sourceFiles('src'))
      for (const m of read(file).matchAll(/\bdocs\/([\w.-]+\.md)(?:#([\w-]+))?/g)) {
        const target = `docs/${m[1]!}`;
        if (m[2] && target === 'docs/decisions.md') cited.add(m[2]);
        const p = problem(target, m[2]);
        if (p) broken.push(`${file}: ${m[0]}: ${p}`);
      }
    expect(broken).toEqual([]);
    expect(cited.size).toBeGreaterThan(5);
  });

  it('src/ cites no file outside the repository', () => {
    const found: string[] = [];
    for (const file of sourceFiles('src'))
      read(file)
        .split('\n')
        .forEach((line, i) => {
          if (/\bCONTRACT\b|\.\.\/shared\/|(?<!docs\/)service-interface\.md/.test(line)) found.push(`${file}:${i + 1}: ${line.trim().slice(0, 100)}`);
        });
    expect(found).toEqual([]);
  });

  it('slugs headings as GitHub does', () => {
    expect(slug('Transitions after HELD')).toBe('transitions-after-held');
    expect(slug('Stale snapshots by occurredAt')).toBe('stale-snapshots-by-occurredat');
    expect(slug('`document.*` bodies (v1)')).toBe('document-bodies-v1');
  });
});
