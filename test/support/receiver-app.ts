// A receiver app on a temporary database, for supertest: the real inbox, verifier and HTTP app.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createManualClock, type ManualClock } from '../../src/clock.ts';
import { closeDatabase, openDatabase, type Db } from '../../src/sqlite/open.ts';
import { createApp } from '../../src/app/app.ts';
import { createInbox, type Inbox } from '../../src/inbox/inbox.ts';
import { silentLogger, type Logger } from '../../src/logger.ts';
import { createMetrics, type Metrics } from '../../src/metrics/metrics.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import { createReceiverRouter } from '../../src/receiver/router.ts';
import { createStatusAdminRouter } from '../../src/status/admin-router.ts';
import { createSqliteInboxStore } from '../../src/storage/sqlite/inbox.ts';
import { createDependencyStatus } from '../../src/status/dependency-status.ts';
import { TEST_KEY_ID, TEST_SECRET } from './webhooks.ts';

export const ADMIN_TOKEN = 'admin-token-for-tests-0001';

export interface ReceiverFixture {
  app: ReturnType<typeof createApp>;
  db: Db;
  dir: string;
  clock: ManualClock;
  inbox: Inbox;
  metrics: Metrics;
  close(): Promise<void>;
}

export function receiverFixture(
  opts: { db?: Db; logger?: Logger; maxBodyBytes?: number; probeIntervalMs?: number; arrived?: () => () => void } = {},
): ReceiverFixture {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-receiver-'));
  const db = opts.db ?? openDatabase({ path: join(dir, 'adapter.db'), migrationsDir: ADAPTER_MIGRATIONS });
  const clock = createManualClock();
  const logger = opts.logger ?? silentLogger();
  const metrics = createMetrics();
  const inbox = createInbox({ store: createSqliteInboxStore(db), clock, logger, ...(opts.probeIntervalMs ? { probeIntervalMs: opts.probeIntervalMs } : {}) });
  metrics.setInboxDepthSource(() => db.prepare('SELECT count(*) FROM inbox_events').pluck().get() as number);
  const receiver = createReceiverRouter({
    inbox,
    clock,
    logger,
    metrics,
    keyId: () => TEST_KEY_ID,
    secrets: () => [TEST_SECRET],
    toleranceSeconds: 300,
    maxBodyBytes: opts.maxBodyBytes ?? 256 * 1024,
    ...(opts.arrived ? { arrived: opts.arrived } : {}),
  });
  const app = createApp({
    logger,
    metrics,
    routers: [receiver],
    adminRouters: [createStatusAdminRouter({ status: createDependencyStatus({ clock, logger }), database: inbox })],
    adminToken: ADMIN_TOKEN,
    readiness: [{ name: 'database', check: () => inbox.isWritable() }],
  });
  return {
    app,
    db,
    dir,
    clock,
    inbox,
    metrics,
    async close() {
      await inbox.close();
      await closeDatabase(db);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
