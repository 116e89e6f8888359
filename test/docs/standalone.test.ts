// The docs stand alone: a fork has only this repository, so README.md and the docs cite nothing outside it,
// every backticked repository path they name exists, and every docs/<file>.md#anchor cited in src/ is a
// heading of that file (docs/decisions.md#… above all). Their links are test/docs/links.test.ts's.
import { describe, expect, it } from 'vitest';
import { filesUnder, markdownFiles, problem, read } from './support/markdown.ts';

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

const sourceFiles = (dir: string) => filesUnder(dir).filter((f) => f.endsWith('.ts'));

describe('the docs stand alone', () => {
  it('finds the documents it checks', () => {
    for (const f of ['README.md', 'docs/service-interface.md', 'docs/decisions.md', 'docs/architecture.md']) expect(markdownFiles).toContain(f);
  });

  it('README.md and the docs cite nothing outside the repository', () => {
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
});
