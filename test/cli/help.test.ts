// Every command answers --help and -h with exit 0 and lists every option it takes; an unknown option exits 2
// with the usage; the command reference in docs/commands.md is the one the specs make, and every
// `npx emr-bridge …` line in the README and docs/ names a command and options that exist.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { COMMANDS_DOC_PATH, withCommandReference } from '../../src/cli/readme.ts';
import { SPECS, type CommandSpec } from '../../src/cli/specs.ts';
import { PACKAGE_ROOT } from '../../src/paths.ts';
import { captureOutput } from '../support/captured-output.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

/** Runs the CLI in this process and returns its exit code and what it printed. */
const run = (argv: string[]) => captureOutput(() => main(argv));

const specs = Object.values(SPECS) as CommandSpec[];

describe('emr-bridge --help', () => {
  it.each(specs.map((s) => [s.name, s] as const))('%s answers --help and -h with every option, exit 0', async (name, spec) => {
    const long = await run([name, '--help']);
    expect(long.code).toBe(0);
    expect(long.out).toContain(`usage: emr-bridge ${name}`);
    for (const [option, o] of Object.entries(spec.options)) {
      expect(long.out).toContain(`--${option}`);
      if (o.default) expect(long.out).toContain(`(default: ${o.default})`);
    }
    expect((await run([name, '-h'])).out).toBe(long.out);
  });

  it.each(specs.map((s) => [s.name] as const))('%s refuses an unknown option with the usage, exit 2', async (name) => {
    const res = await run([name, '--no-such-option']);
    expect(res.code).toBe(2);
    expect(res.err).toContain("'--no-such-option'");
    expect(res.err).toContain(`usage: emr-bridge ${name}`);
  });

  it('lists every command at the top level', async () => {
    const res = await run(['--help']);
    expect(res.code).toBe(0);
    for (const s of specs) expect(res.out).toContain(`  ${s.name} `);
  });
});

describe('the documented commands', () => {
  it('docs/commands.md carries the command reference the specs make (npm run readme rewrites it)', () => {
    const doc = readFileSync(COMMANDS_DOC_PATH, 'utf8');
    expect(doc).toContain('`npx emr-bridge serve`');
    expect(withCommandReference(doc)).toBe(doc);
  });

  it('every `npx emr-bridge …` in the README and docs/ names a command and options that exist', () => {
    const files = [
      join(PACKAGE_ROOT, 'README.md'),
      ...readdirSync(join(PACKAGE_ROOT, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => join(PACKAGE_ROOT, 'docs', f)),
    ];
    const problems: string[] = [];
    for (const file of files) {
      for (const m of readFileSync(file, 'utf8').matchAll(/npx emr-bridge ([a-z][\w-]*)([^`\n]*)/g)) {
        const spec = (SPECS as Record<string, CommandSpec>)[m[1]!];
        if (!spec) {
          problems.push(`${file}: no command ${m[1]}`);
          continue;
        }
        for (const o of m[2]!.matchAll(/(?:^|\s|\[)--([a-z][\w-]*)/g))
          if (!(o[1]! in spec.options) && o[1] !== 'help') problems.push(`${file}: ${m[1]} has no --${o[1]}`);
      }
    }
    expect(problems).toEqual([]);
  });
});
