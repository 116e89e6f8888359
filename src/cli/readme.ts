// `npm run readme`: rewrites the command reference (docs/commands.md) from src/cli/specs.ts (a test fails while
// the two differ, so a new option cannot ship undocumented).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../paths.ts';
import { commandReference } from './specs.ts';

export const COMMANDS_DOC_PATH = join(PACKAGE_ROOT, 'docs', 'commands.md');
export const BEGIN = '<!-- commands:begin (npm run readme writes this part) -->';
export const END = '<!-- commands:end -->';

/** The document with its command reference replaced by the current one. */
export function withCommandReference(doc: string): string {
  const start = doc.indexOf(BEGIN);
  const stop = doc.indexOf(END);
  if (start < 0 || stop < start) throw new Error(`docs/commands.md has no ${BEGIN} … ${END} block`);
  return `${doc.slice(0, start + BEGIN.length)}\n\n${commandReference()}\n\n${doc.slice(stop)}`;
}

if (process.argv[1]?.endsWith('readme.ts')) {
  writeFileSync(COMMANDS_DOC_PATH, withCommandReference(readFileSync(COMMANDS_DOC_PATH, 'utf8')));
  process.stdout.write('docs/commands.md: command reference written\n');
}
