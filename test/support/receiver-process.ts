// A receiver-only process (durable inbox + verifier, no processor): the crash test kills it with SIGKILL
// and the receiver benchmark loads it. Run: node bin/run-ts.js test/support/receiver-process.ts <db> <port>
// Prints `listening on http://127.0.0.1:<port>` when ready.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock } from '../../src/clock.ts';
import { openDatabase } from '../../src/database/open.ts';
import { createApp } from '../../src/http/app.ts';
import { createInbox } from '../../src/inbox/inbox.ts';
import { silentLogger } from '../../src/logger.ts';
import { createMetrics } from '../../src/metrics/metrics.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import { createReceiverRouter } from '../../src/receiver/router.ts';
import { TEST_KEY_ID, TEST_SECRET } from './webhooks.ts';

const [dbPath, portArg] = process.argv.slice(2);
if (!dbPath) throw new Error('usage: receiver-process.ts <db path> [port]');
const db = openDatabase({ path: dbPath, migrationsDir: ADAPTER_MIGRATIONS });
const logger = silentLogger();
const metrics = createMetrics();
const inbox = createInbox({ db, clock: systemClock, logger });
const app = createApp({
  logger,
  metrics,
  routers: [
    createReceiverRouter({
      inbox,
      clock: systemClock,
      logger,
      metrics,
      keyId: () => TEST_KEY_ID,
      secrets: () => [TEST_SECRET],
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
    void inbox.close().then(() => {
      db.close();
      process.exit(0);
    });
  });
});
