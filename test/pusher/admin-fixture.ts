// The pusher's admin routes alone, over a fresh SQLite outbox and a manual clock, with a service that is
// never called: for tests of what the admin API shows of documents.
import supertest from 'supertest';
import { createManualClock } from '../../src/clock.ts';
import { parseConfig } from '../../src/config.ts';
import { createMemoryEmr } from '../../src/emr/memory/index.ts';
import { createApp } from '../../src/app/app.ts';
import { silentLogger } from '../../src/logger.ts';
import { createMetrics } from '../../src/metrics/metrics.ts';
import { createPusher, createPusherAdminRouter } from '../../src/pusher/index.ts';
import { openTestDatabase, sqlitePusherStores } from './sqlite-stores.ts';

const TOKEN = 'admin-token-for-tests-0001';

export function pusherAdminFixture() {
  const clock = createManualClock();
  const pusher = createPusher({
    ...sqlitePusherStores(openTestDatabase(), clock),
    clock,
    logger: silentLogger(),
    emr: createMemoryEmr(),
    config: parseConfig({}),
    serviceClient: {
      async postDocument() {
        throw new Error('not sent in these tests');
      },
      async getDocument() {
        return undefined;
      },
    },
  });
  const app = createApp({
    logger: silentLogger(),
    metrics: createMetrics(),
    routers: [],
    adminRouters: [createPusherAdminRouter({ pusher, logger: silentLogger(), maxBodyBytes: parseConfig({}).adminMaxBodyBytes })],
    adminToken: TOKEN,
    readiness: [],
  });
  const auth = { authorization: `Bearer ${TOKEN}` };
  return {
    clock,
    pusher,
    get: (path: string) => supertest(app.callback()).get(`/admin${path}`).set(auth),
    post: (path: string) => supertest(app.callback()).post(`/admin${path}`).set(auth),
  };
}
