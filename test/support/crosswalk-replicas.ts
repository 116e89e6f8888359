// Two replicas on one PostgreSQL database (a fresh one from ./postgres.ts), beside one in-memory EMR that keeps its
// doctors and locations to itself: each replica with its own pools, processor stores, coordination (LISTEN/NOTIFY)
// and crosswalk module, and its admin API with the crosswalk's routes. A test builds a replica's processor when it
// wants one (after wrapping its stores, if it must), and starts it or runs passes itself.
import request from 'supertest';
import { createApp } from '../../src/app/app.ts';
import { createAuditor } from '../../src/audit/audit-trail.ts';
import { createManualClock, type ManualClock } from '../../src/clock.ts';
import { parseConfig } from '../../src/config.ts';
import { createCrosswalkAdminRouter } from '../../src/crosswalk/admin-router.ts';
import { type Crosswalk, crosswalkOverStores } from '../../src/crosswalk/crosswalk.ts';
import { createMemoryEmr, type MemoryEmr } from '../../src/emr/memory/index.ts';
import { silentLogger } from '../../src/logger.ts';
import { createMetrics } from '../../src/metrics/metrics.ts';
import { createProcessor, type Processor } from '../../src/processor/index.ts';
import type { Coordination } from '../../src/storage/coordination.ts';
import { createPostgresAuditStore } from '../../src/storage/postgres/audit.ts';
import { createPostgresCoordination } from '../../src/storage/postgres/coordination.ts';
import { createPostgresInboxStore } from '../../src/storage/postgres/inbox.ts';
import { migratePostgres } from '../../src/storage/postgres/migrate.ts';
import { createPool, type Pool } from '../../src/storage/postgres/pool.ts';
import { createPostgresProcessorStores } from '../../src/storage/postgres/processor-stores.ts';
import type { ProcessorStores } from '../../src/storage/processor-stores.ts';
import { createTestDatabase } from './postgres.ts';

export const REPLICA_ADMIN_TOKEN = 'crosswalk-replica-admin-token-0001';

export interface CrosswalkReplica {
  stores: ProcessorStores;
  coordination: Coordination;
  crosswalk: Crosswalk;
  /** A request to this replica's admin API, as ADMIN_TOKEN. */
  admin(method: 'get' | 'put' | 'delete', path: string): request.Test;
  /**
   * This replica's processor over its stores (as they are when called), woken by its coordination. Its poll is a
   * minute: what it does sooner, it was woken for.
   */
  processor(): Processor;
}

export interface CrosswalkReplicas {
  clock: ManualClock;
  emr: MemoryEmr;
  a: CrosswalkReplica;
  b: CrosswalkReplica;
  /** Stores an event as the receiver would (the inbox row and its intake row); returns its eventId. */
  store(body: Record<string, unknown> & { eventId?: unknown }): Promise<string>;
  state(eventId: string): Promise<{ state: string; attempts: number } | undefined>;
  close(): Promise<void>;
}

export async function crosswalkReplicas(): Promise<CrosswalkReplicas> {
  const database = await createTestDatabase();
  const clock = createManualClock();
  const emr = createMemoryEmr();
  emr.creatable.delete('doctor');
  emr.creatable.delete('location');
  const pools: Pool[] = [];
  const closing: (() => Promise<unknown>)[] = [];
  const first = createPool(database.url, { max: 6 });
  pools.push(first);
  await migratePostgres(first, 'test');

  const replica = (pool: Pool): CrosswalkReplica => {
    const stores = createPostgresProcessorStores(pool, clock, { lockConnections: 4 });
    const coordination = createPostgresCoordination({ pool, url: database.url });
    const auditor = createAuditor({ store: createPostgresAuditStore(pool), clock, logger: silentLogger() });
    const crosswalk = crosswalkOverStores(stores, { emr, auditor, coordination });
    const app = createApp({
      logger: silentLogger(),
      metrics: createMetrics(),
      routers: [],
      adminRouters: [createCrosswalkAdminRouter({ crosswalk, store: stores.crosswalk })],
      adminToken: REPLICA_ADMIN_TOKEN,
      auditor,
      readiness: [],
    });
    const processors: Processor[] = [];
    closing.push(async () => {
      for (const p of processors) await p.stop();
      await coordination.close();
      await stores.close();
    });
    return {
      stores,
      coordination,
      crosswalk,
      admin: (method, path) =>
        request(app.callback())
          [method](`/admin${path}`)
          .set({ authorization: `Bearer ${REPLICA_ADMIN_TOKEN}` }),
      processor() {
        const p = createProcessor({
          stores,
          clock,
          logger: silentLogger(),
          emr,
          config: parseConfig({ PROCESSOR_POLL_MS: '60000' }),
          random: () => 0.5,
          serviceClient: { putMapping: async () => undefined },
          documentEvents: { apply: async () => undefined },
          coordination,
        });
        processors.push(p);
        return p;
      },
    };
  };
  const a = replica(first);
  const second = createPool(database.url, { max: 6 });
  pools.push(second);
  const b = replica(second);
  const inbox = createPostgresInboxStore(first);

  return {
    clock,
    emr,
    a,
    b,
    async store(body) {
      const eventId = String(body.eventId);
      await inbox.insertBatch([{ eventId, eventType: String(body.eventType), headers: {}, body: Buffer.from(JSON.stringify(body)), receivedAt: clock.now() }]);
      return eventId;
    },
    async state(eventId) {
      const { rows } = await first.query<{ state: string; attempts: number }>(
        'SELECT p.state, p.attempts FROM processing p JOIN inbox_events e ON e.id = p.inbox_id WHERE e.event_id = $1',
        [eventId],
      );
      return rows[0];
    },
    async close() {
      for (const c of closing) await c();
      for (const p of pools) await p.end();
      await database.drop();
    },
  };
}
