// Reading a Dockerfile as `docker build` does, as far as the tests need: stages and their instructions
// (continuation lines joined, comment lines dropped), what each COPY puts where, ENV, CMD and HEALTHCHECK.
// No container engine runs on the test machines, so this is how the image is checked.
import { posix } from 'node:path';

export interface Instruction {
  keyword: string;
  args: string;
}

export interface Stage {
  image: string;
  name?: string;
  instructions: Instruction[];
}

export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  let pending = '';
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    // Docker drops comment lines, also in the middle of a continued instruction.
    if (line.startsWith('#')) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const full = `${pending}${line}`.trim();
    pending = '';
    if (!full) continue;
    const [, word, args = ''] = /^(\S+)\s*([\s\S]*)$/.exec(full)!;
    const keyword = word!.toUpperCase();
    if (keyword === 'FROM') {
      const m = /^(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      if (!m) throw new Error(`FROM not understood: ${args}`);
      stages.push({ image: m[1]!, ...(m[2] ? { name: m[2] } : {}), instructions: [] });
      continue;
    }
    if (!stages.length) throw new Error(`${keyword} before the first FROM`);
    stages.at(-1)!.instructions.push({ keyword, args });
  }
  return stages;
}

/** Words split on blanks outside quotes, quotes and escapes removed: `A="b c" D=e` → [`A=b c`, `D=e`]. */
function words(args: string): string[] {
  const out: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const c = args[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else word += c === '\\' && quote === '"' ? (args[++i] ?? '') : c;
    } else if (c === '"' || c === "'") {
      quote = c;
      word ??= '';
    } else if (/\s/.test(c)) {
      if (word !== undefined) out.push(word);
      word = undefined;
    } else word = (word ?? '') + (c === '\\' ? (args[++i] ?? '') : c);
  }
  if (word !== undefined) out.push(word);
  return out;
}

/** Exec form (a JSON array) as is; shell form through `/bin/sh -c`, as Docker runs it. */
export function execForm(args: string): string[] {
  const trimmed = args.trim();
  return trimmed.startsWith('[') ? (JSON.parse(trimmed) as string[]) : ['/bin/sh', '-c', trimmed];
}

export const all = (stage: Stage, keyword: string): string[] => stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
export const lastOf = (stage: Stage, keyword: string): string | undefined => all(stage, keyword).at(-1);

/** ENV of a stage: `K=V …` pairs, or the older `ENV K V`. Later ones win. */
export function envOf(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const args of all(stage, 'ENV')) {
    const parts = words(args);
    if (!parts[0]!.includes('=')) env[parts[0]!] = args.trim().slice(parts[0]!.length).trim();
    else for (const p of parts) env[p.slice(0, p.indexOf('='))] = p.slice(p.indexOf('=') + 1);
  }
  return env;
}

/** The HEALTHCHECK's command (options dropped), or undefined for none. */
export function healthcheckOf(stage: Stage): string[] | undefined {
  const args = lastOf(stage, 'HEALTHCHECK');
  if (args === undefined || /^NONE$/i.test(args.trim())) return undefined;
  const m = /^(?:--\S+\s+)*CMD\s+([\s\S]+)$/i.exec(args.trim());
  if (!m) throw new Error(`HEALTHCHECK not understood: ${args}`);
  return execForm(m[1]!);
}

export interface CopyTarget {
  /** The stage copied from (`--from=`), or undefined for the build context. */
  from?: string;
  /** As written: relative to the build context, or an absolute path in the `from` stage. */
  source: string;
  /** Absolute path in the image. */
  target: string;
}

/** Where each COPY of a stage puts each of its sources, with the WORKDIR in effect at that point. */
export function copyTargets(stage: Stage): CopyTarget[] {
  const out: CopyTarget[] = [];
  let workdir = '/';
  for (const { keyword, args } of stage.instructions) {
    if (keyword === 'WORKDIR') workdir = posix.resolve(workdir, args.trim());
    if (keyword !== 'COPY' && keyword !== 'ADD') continue;
    const parts = args.trim().startsWith('[') ? (JSON.parse(args) as string[]) : words(args);
    const flags = parts.filter((p) => p.startsWith('--'));
    const paths = parts.filter((p) => !p.startsWith('--'));
    const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length);
    const dest = paths.at(-1)!;
    const sources = paths.slice(0, -1);
    const into = sources.length > 1 || dest.endsWith('/');
    for (const source of sources) {
      const base = posix.resolve(workdir, dest);
      out.push({ ...(from ? { from } : {}), source, target: into ? posix.join(base, posix.basename(source)) : base });
    }
  }
  return out;
}

/** Whether a .dockerignore pattern (Go filepath.Match with `**`) excludes a path of the build context. */
export function ignoredBy(patterns: string[], path: string): boolean {
  let ignored = false;
  for (const raw of patterns) {
    const negate = raw.startsWith('!');
    const pattern = posix.normalize((negate ? raw.slice(1) : raw).replace(/^\/+/, ''));
    const re = new RegExp(
      `^${pattern
        .split(/(\*\*|\*|\?)/)
        .map((t) => (t === '**' ? '.*' : t === '*' ? '[^/]*' : t === '?' ? '[^/]' : t.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
        .join('')}(/.*)?$`,
    );
    // A path is excluded when it, or a folder above it, matches; the last matching pattern decides.
    if (re.test(path)) ignored = !negate;
  }
  return ignored;
}
