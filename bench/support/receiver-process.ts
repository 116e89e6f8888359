// A receiver-only process (durable inbox + verifier, no processor): the receiver benchmarks load it and
// the crash test (test/receiver) kills it with SIGKILL. It verifies with SERVICE_KEY_ID and
// SERVICE_SIGNING_SECRETS (comma-separated), as the adapter does. The store is an SQLite file, or, given a
// postgres:// URL instead of a path, a migrated PostgreSQL database (bench/receiver-postgres.ts).
// Run: node bin/run-ts.js bench/support/receiver-process.ts <db path | postgres://…> <port>
// Prints `listening on http://127.0.0.1:<port>` when ready.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock } from '../../src/clock.ts';
import { openDatabase } from '../../src/sqlite/open.ts';
import { createApp } from '../../src/app/app.ts';
import { createInbox } from '../../src/inbox/inbox.ts';
import { silentLogger } from '../../src/logger.ts';
import { createMetrics } from '../../src/metrics/metrics.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import { createReceiverRouter } from '../../src/receiver/router.ts';
import type { InboxStore } from '../../src/storage/inbox.ts';
import { createPostgresInboxStore } from '../../src/storage/postgres/inbox.ts';
import { createPool } from '../../src/storage/postgres/pool.ts';
import { createSqliteInboxStore } from '../../src/storage/sqlite/inbox.ts';

const [dbPath, portArg] = process.argv.slice(2);
const keyId = process.env.SERVICE_KEY_ID;
const secrets = process.env.SERVICE_SIGNING_SECRETS?.split(',');
if (!dbPath || !keyId || !secrets) throw new Error('usage: SERVICE_KEY_ID=… SERVICE_SIGNING_SECRETS=… receiver-process.ts <db path | postgres://…> [port]');
const onPostgres = /^postgres(ql)?:\/\//.test(dbPath);
const db = onPostgres ? undefined : openDatabase({ path: dbPath, migrationsDir: ADAPTER_MIGRATIONS });
const pool = onPostgres ? createPool(dbPath) : undefined;
const store: InboxStore = pool ? createPostgresInboxStore(pool) : createSqliteInboxStore(db!);
const logger = silentLogger();
const metrics = createMetrics();
const inbox = createInbox({ store, clock: systemClock, logger });
const app = createApp({
  logger,
  metrics,
  routers: [
    createReceiverRouter({
      inbox,
      clock: systemClock,
      logger,
      metrics,
      keyId: () => keyId,
      secrets: () => secrets,
      toleranceSeconds: 300,
      maxBodyBytes: 256 * 1024,
    }),
  ],
  adminRouters: [],
  adminToken: undefined,
  readiness: [],
});
const server = createServer(app.callback());
server.listen(Number(portArg ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => {
  server.close(() => {
    void inbox.close().then(async () => {
      db?.close();
      await pool?.end();
      process.exit(0);
    });
  });
});
