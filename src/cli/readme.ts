// `npm run readme`: rewrites the README's command reference from src/cli/specs.ts (a test fails while the
// two differ, so a new option cannot ship undocumented).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../paths.ts';
import { commandReference } from './specs.ts';

export const README_PATH = join(PACKAGE_ROOT, 'README.md');
export const BEGIN = '<!-- commands:begin (npm run readme writes this part) -->';
export const END = '<!-- commands:end -->';

/** The README with its command reference replaced by the current one. */
export function withCommandReference(readme: string): string {
  const start = readme.indexOf(BEGIN);
  const stop = readme.indexOf(END);
  if (start < 0 || stop < start) throw new Error(`README.md has no ${BEGIN} … ${END} block`);
  return `${readme.slice(0, start + BEGIN.length)}\n\n${commandReference()}\n\n${readme.slice(stop)}`;
}

if (process.argv[1]?.endsWith('readme.ts')) {
  writeFileSync(README_PATH, withCommandReference(readFileSync(README_PATH, 'utf8')));
  process.stdout.write('README.md: command reference written\n');
}
