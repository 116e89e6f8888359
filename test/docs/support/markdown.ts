// Reading the repository's Markdown as GitHub renders it, for the docs tests: which documents there are (README.md
// and every .md under docs/), their text without code fences, their headings' anchors and their relative links.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

export const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** Every file under a folder of the repository, as paths from the root. */
export function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(`${dir}/${e.name}`) : [`${dir}/${e.name}`]));
}

/** README.md and every Markdown document under docs/, at any depth. */
export const markdownFiles = ['README.md', ...filesUnder('docs').filter((f) => f.endsWith('.md'))];

/** The text without fenced code blocks (``` or ~~~): what Markdown renders as prose, headings and links. */
export function withoutFences(text: string): string {
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
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]*>/g, '')
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const anchorCache = new Map<string, Set<string>>();
/** Every anchor a Markdown file offers: its headings (repeats numbered as GitHub does) and explicit ids. */
export function anchorsOf(file: string): Set<string> {
  const cached = anchorCache.get(file);
  if (cached) return cached;
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFences(read(file)).split('\n')) {
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

/** Why a repository path (from the root) with an optional #anchor does not resolve; undefined when it does. */
export function problem(target: string, anchor: string | undefined): string | undefined {
  const full = join(ROOT, target);
  if (relative(ROOT, full).startsWith('..')) return 'points outside the repository';
  if (!existsSync(full)) return 'no such file';
  if (anchor && target.endsWith('.md') && statSync(full).isFile() && !anchorsOf(target).has(anchor)) return `no heading #${anchor} in ${target}`;
  return undefined;
}

export interface Link {
  raw: string;
  /** The path it points at, from the repository root (the file itself for a bare #anchor). */
  target: string;
  anchor: string | undefined;
}

/** Relative links `[text](path#anchor)` of a Markdown file (images too), resolved from the file's folder. */
export function relativeLinks(file: string): Link[] {
  const links: Link[] = [];
  for (const m of withoutFences(read(file)).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const raw = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(raw)) continue; // https:, mailto:
    const [path, anchor] = raw.split('#', 2) as [string, string | undefined];
    const target = path === '' ? file : relative(ROOT, resolve(ROOT, dirname(file), decodeURI(path)));
    links.push({ raw, target, anchor });
  }
  return links;
}
