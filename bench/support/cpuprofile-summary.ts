// Summarises a V8 .cpuprofile (node --cpu-prof): self and inclusive samples by function and by file.
// Self: samples whose innermost frame is the function (or a function of the file). Inclusive: samples with
// the function (file) anywhere on the stack, counted once per sample however deep the recursion.
// `window` (microseconds on the profile's clock, CLOCK_MONOTONIC: process.hrtime.bigint() / 1000n in any
// process of the machine) keeps only the samples taken in it, e.g. those of a load run, not start-up.
//
// `sourceMaps` (file URL -> source map, as bench/support/source-maps-at-exit.mjs writes them) turns the
// positions tsx's compiled one-line files give into source lines; without them a .ts frame shows `line:col`
// of the compiled code (marked `compiled`).
//
// Run: node bin/run-ts.js bench/support/cpuprofile-summary.ts <file.cpuprofile> [top N] [source maps .json]
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { pathToFileURL } from 'node:url';
import { ROOT } from './child.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Item {
  name: string;
  samples: number;
  ms: number;
  /** Share of the samples counted (the window's). */
  percent: number;
}

export interface Summary {
  samples: number;
  /** Samples that are not (idle): the process was doing something. */
  busySamples: number;
  ms: number;
  selfByFunction: Item[];
  inclusiveByFunction: Item[];
  selfByFile: Item[];
  inclusiveByFile: Item[];
}

const ROOT_URL = pathToFileURL(ROOT).href.replace(/\/?$/, '/');

/** A file as a reader finds it: relative to the checkout, a package under node_modules, or node's own. */
export function shortFile(url: string): string {
  if (!url) return '(native)';
  let f = url.startsWith(ROOT_URL) ? url.slice(ROOT_URL.length) : url;
  const nm = f.lastIndexOf('node_modules/');
  if (nm >= 0) f = f.slice(nm + 'node_modules/'.length);
  return f;
}

type Position = (url: string, line: number, column: number) => string;

/** `line` (1-based, source) where a source map says so; the compiled `line:col` of a .ts file otherwise. */
function positions(sourceMaps: Record<string, SourceMapPayload> = {}): Position {
  const maps = new Map<string, SourceMap>();
  return (url, line, column) => {
    const payload = sourceMaps[url];
    if (payload) {
      let map = maps.get(url);
      if (!map) {
        map = new SourceMap(payload);
        maps.set(url, map);
      }
      const entry = map.findEntry(line, column) as { originalLine?: number };
      if (typeof entry.originalLine === 'number') return String(entry.originalLine + 1);
    }
    return url.endsWith('.ts') ? `${line + 1}:${column + 1} compiled` : String(line + 1);
  };
}

function frameKeys(node: ProfileNode, position: Position): { fn: string; file: string } {
  const { functionName, url, lineNumber, columnNumber } = node.callFrame;
  const file = url ? shortFile(url) : functionName.startsWith('(') ? functionName : '(native)';
  const fn =
    functionName.startsWith('(') && !url ? functionName : `${functionName || '(anonymous)'} ${file}:${url ? position(url, lineNumber, columnNumber) : ''}`;
  return { fn, file };
}

export function summarizeProfile(
  profile: CpuProfile,
  opts: { top?: number; window?: { fromUs: number; toUs: number }; sourceMaps?: Record<string, SourceMapPayload> } = {},
): Summary {
  const top = opts.top ?? 25;
  const position = positions(opts.sourceMaps);
  const keyCache = new Map<number, { fn: string; file: string }>();
  const keyOf = (node: ProfileNode) => {
    let k = keyCache.get(node.id);
    if (!k) {
      k = frameKeys(node, position);
      keyCache.set(node.id, k);
    }
    return k;
  };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

  // The distinct function and file keys on each leaf's stack, computed once per leaf.
  const stackKeys = new Map<number, { fns: string[]; files: string[] }>();
  const keysOf = (leaf: number) => {
    let k = stackKeys.get(leaf);
    if (k) return k;
    const fns = new Set<string>();
    const files = new Set<string>();
    for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) {
      const node = byId.get(id)!;
      if (node.callFrame.functionName === '(root)') continue;
      const { fn, file } = keyOf(node);
      fns.add(fn);
      files.add(file);
    }
    k = { fns: [...fns], files: [...files] };
    stackKeys.set(leaf, k);
    return k;
  };

  const selfFn = new Map<string, number>();
  const selfFile = new Map<string, number>();
  const inclFn = new Map<string, number>();
  const inclFile = new Map<string, number>();
  const add = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  let counted = 0;
  let idle = 0;
  let t = profile.startTime;
  let firstT = Number.NaN;
  let lastT = Number.NaN;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    if (opts.window && (t < opts.window.fromUs || t > opts.window.toUs)) continue;
    if (Number.isNaN(firstT)) firstT = t;
    lastT = t;
    const leaf = profile.samples[i]!;
    const node = byId.get(leaf)!;
    counted++;
    if (node.callFrame.functionName === '(idle)') idle++;
    const { fn, file } = keyOf(node);
    add(selfFn, fn);
    add(selfFile, file);
    const keys = keysOf(leaf);
    for (const k of keys.fns) add(inclFn, k);
    for (const k of keys.files) add(inclFile, k);
  }
  const ms = counted > 1 ? (lastT - firstT) / 1000 : 0;
  const msPerSample = counted ? ms / counted : 0;
  const items = (m: Map<string, number>): Item[] =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, samples]) => ({ name, samples, ms: Math.round(samples * msPerSample), percent: counted ? (100 * samples) / counted : 0 }));
  return {
    samples: counted,
    busySamples: counted - idle,
    ms,
    selfByFunction: items(selfFn),
    inclusiveByFunction: items(inclFn),
    selfByFile: items(selfFile),
    inclusiveByFile: items(inclFile),
  };
}

export function printSummary(s: Summary, title = 'CPU profile', out: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): void {
  out(
    `\n${title}: ${s.samples} samples over ${(s.ms / 1000).toFixed(1)} s, ${s.busySamples} busy (${((100 * s.busySamples) / Math.max(1, s.samples)).toFixed(0)}%); percentages are of all samples`,
  );
  const table = (heading: string, items: Item[]) => {
    out(`\n${heading}`);
    items.forEach((it, i) => {
      out(`${String(i + 1).padStart(3)}. ${it.percent.toFixed(1).padStart(5)}%  ${String(it.samples).padStart(6)}  ${it.name}`);
    });
  };
  table('top self time, by function', s.selfByFunction);
  table('top inclusive time, by function', s.inclusiveByFunction);
  table('top self time, by file', s.selfByFile);
  table('top inclusive time, by file', s.inclusiveByFile);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [file, topArg, mapsFile] = process.argv.slice(2);
  if (!file) throw new Error('usage: cpuprofile-summary.ts <file.cpuprofile> [top N] [source maps .json]');
  const sourceMaps = mapsFile && existsSync(mapsFile) ? (JSON.parse(readFileSync(mapsFile, 'utf8')) as Record<string, SourceMapPayload>) : undefined;
  printSummary(
    summarizeProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, { top: Number(topArg ?? 25), ...(sourceMaps ? { sourceMaps } : {}) }),
    file,
  );
}
