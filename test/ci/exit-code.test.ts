// What CI relies on: a failing test fails `npm test`. vitest run with the project's own global setup (whose
// embedded PostgreSQL brings async-exit-hook, which once turned every exit code into 0) and summary reporter, over
// a file with a failed assertion and a suite whose beforeAll throws: the exit code is 1 and the closing line
// counts both failures.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

it('a failed assertion and a failed beforeAll end the run with exit code 1 and "2 failed"', () => {
  const run = spawnSync(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', '--config', 'test/ci/fixtures/vitest.config.ts'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
    timeout: 60_000,
  });
  expect(run.stdout).toMatch(/^0 passed, 2 failed, 1 skipped$/m);
  expect(run.status).toBe(1);
});
