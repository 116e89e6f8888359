// Tests run in forked processes (better-sqlite3 is a native addon) and never share a data folder. One
// embedded PostgreSQL server serves the run (test/support/postgres-global-setup.ts); each test file makes its
// own databases on it (test/support/postgres.ts).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    globalSetup: ['./test/support/postgres-global-setup.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
