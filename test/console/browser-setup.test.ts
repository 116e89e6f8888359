// Owns the promise that the browser tests run on a fresh machine: the README and .ci/run give the same one
// Chromium install command (the one bench/support/chromium.ts names when the browser is missing), .ci/run
// runs it before `npm ci && npm test`, and a missing browser fails with that command instead of skipping.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CHROMIUM_INSTALL_COMMAND, ChromiumMissingError } from '../../bench/support/chromium.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (f: string) => readFileSync(join(ROOT, f), 'utf8');

describe('the browser for the console tests', () => {
  it('the README gives the install command at the top, in a block of its own, before anything else', () => {
    const readme = read('README.md');
    const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.trim());
    expect(blocks.slice(0, 2)).toEqual([expect.stringContaining('npm ci && npm test'), CHROMIUM_INSTALL_COMMAND]);
  });

  it('.ci/run runs exactly that command, then npm ci && npm test', () => {
    const lines = read('.ci/run')
      .split('\n')
      .filter((l) => l && !l.startsWith('#'));
    expect(lines.slice(-2)).toEqual([CHROMIUM_INSTALL_COMMAND, 'npm ci && npm test']);
  });

  it('a missing Chromium is an error that names the install command', () => {
    expect(new ChromiumMissingError().message).toContain(CHROMIUM_INSTALL_COMMAND);
  });
});
