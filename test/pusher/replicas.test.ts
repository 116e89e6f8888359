// Pushers of two replicas on one PostgreSQL database: no document is sent twice while both live, however
// their passes interleave; a replica that died mid-send has its sends taken over once their leases run out,
// never before; the EMR scan runs in one of them at a time; and a document enqueued in one wakes the other.
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock, type ManualClock } from '../../src/clock.ts';
import { parseConfig } from '../../src/config.ts';
import type { DocumentRequest, DocumentResource } from '../../src/contract/documents.ts';
import type { EmrDocument } from '../../src/emr/port.ts';
import { createMemoryEmr, type MemoryEmr } from '../../src/emr/memory/index.ts';
import { silentLogger } from '../../src/logger.ts';
import { createPusher, type Pusher } from '../../src/pusher/index.ts';
import { createPostgresCoordination } from '../../src/storage/postgres/coordination.ts';
import { createPostgresDocumentStore } from '../../src/storage/postgres/documents.ts';
import { createPostgresMappingStore } from '../../src/storage/postgres/mappings.ts';
import { migratePostgres } from '../../src/storage/postgres/migrate.ts';
import { createPool, type Pool } from '../../src/storage/postgres/pool.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';
import { PDF } from '../support/simulator-fixture.ts';
import { waitFor } from '../support/wait.ts';

const LEASE_MS = 5_000;

const sent = (externalId: string): DocumentResource => ({
  type: 'document',
  documentType: 'lab_report',
  serviceId: `doc_${externalId}`,
  externalId,
  patientServiceId: 'pat_1',
  status: 'SENT',
  sentAt: '2026-01-15T10:00:00.000Z',
  action: 'received',
});

const request = (externalId: string) => ({
  externalId,
  patientPhone: '+15550001111',
  patientName: 'Synthetic Patient',
  label: 'Blood count',
  file: { base64: PDF.toString('base64'), filename: 'blood.pdf' },
});

/** The service both replicas post to: every post counted; `answer` decides when (and whether) each is answered. */
function countingService(answer: (externalId: string) => Promise<void> = () => new Promise((r) => setTimeout(r, Math.random() * 5))) {
  const posts: string[] = [];
  return {
    posts,
    client: {
      async postDocument(_type: string, body: DocumentRequest) {
        posts.push(body.externalId);
        await answer(body.externalId);
        return { httpStatus: 201, replayed: false, resource: sent(body.externalId) };
      },
      async getDocument() {
        return undefined;
      },
    },
  };
}

let database: TestDatabase | undefined;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await database?.drop();
  database = undefined;
});

/** A replica: its own pool and coordination on the shared database, the shared clock and EMR. */
async function replica(
  clock: ManualClock,
  emr: MemoryEmr,
  service: ReturnType<typeof countingService>,
  env: Record<string, string> = {},
): Promise<{ pusher: Pusher; pool: Pool }> {
  database ??= await createTestDatabase();
  const pool = createPool(database.url, { max: 6 });
  if (cleanups.length === 0) await migratePostgres(pool, 'test');
  const coordination = createPostgresCoordination({ pool, url: database.url });
  const pusher = createPusher({
    documents: createPostgresDocumentStore(pool, clock),
    mappings: createPostgresMappingStore(pool, clock),
    coordination,
    clock,
    logger: silentLogger(),
    emr,
    random: () => 0.5,
    config: parseConfig({ PUSHER_LEASE_MS: String(LEASE_MS), SERVICE_TIMEOUT_MS: String(LEASE_MS / 2), PUSHER_CONCURRENCY: '4', ...env }),
    serviceClient: service.client,
  });
  cleanups.push(async () => {
    await pusher.stop();
    await coordination.close();
    await pool.end();
  });
  return { pusher, pool };
}

const emrDoc = (id: string): EmrDocument => ({
  id,
  version: '1',
  documentType: 'lab_report',
  label: 'CBC',
  filename: 'cbc.pdf',
  content: { base64: PDF.toString('base64') },
  patient: { id: 'emr-patient-1', serviceId: 'pat_1' },
  lastUpdated: '2026-01-15T09:00:00.000Z',
});

describe('two replicas on one PostgreSQL database', () => {
  it('send each document once while both live, whichever replica enqueued it', async () => {
    const clock = createManualClock();
    const emr = createMemoryEmr();
    const service = countingService();
    const a = await replica(clock, emr, service);
    const b = await replica(clock, emr, service);
    const ids = Array.from({ length: 60 }, (_, i) => `lab-${i}`);
    for (const [i, id] of ids.entries()) await (i % 2 ? a : b).pusher.enqueue('lab_report', request(id));
    for (let round = 0; round < 5; round++) await Promise.all([a.pusher.runOnce(), b.pusher.runOnce(), a.pusher.runOnce()]);
    expect([...service.posts].sort()).toEqual([...ids].sort());
    expect(await a.pusher.outbox.countByState()).toEqual([{ state: 'SENT', count: 60 }]);
  });

  it("take over a dead replica's sends once their leases run out, never before", async () => {
    const clock = createManualClock();
    const emr = createMemoryEmr();
    // The first replica's service does not answer: it died with its sends in flight (they end with the test).
    const hanging: (() => void)[] = [];
    const dead = countingService(() => new Promise<void>((_, reject) => hanging.push(() => reject(new Error('the replica is gone')))));
    const alive = countingService();
    const a = await replica(clock, emr, dead);
    const b = await replica(clock, emr, alive);
    for (const id of ['lab-1', 'lab-2']) await a.pusher.enqueue('lab_report', request(id));
    void a.pusher.runOnce();
    await waitFor(() => dead.posts.length === 2 || undefined, 5_000, 5);
    expect(await b.pusher.recover()).toBe(0);
    await b.pusher.runOnce();
    expect(alive.posts).toEqual([]);
    clock.advance(LEASE_MS);
    await b.pusher.runOnce();
    expect([...alive.posts].sort()).toEqual(['lab-1', 'lab-2']);
    expect((await b.pusher.outbox.get('lab-1'))?.state).toBe('SENT');
    for (const end of hanging) end();
    // What the dead replica would record now (a retry on its old lease) changes nothing.
    await a.pusher.runOnce();
    expect((await b.pusher.outbox.get('lab-1'))?.state).toBe('SENT');
  });

  it('scan the EMR in one replica at a time', async () => {
    const clock = createManualClock();
    const emr = createMemoryEmr();
    emr.documents.push(emrDoc('dr-1'), emrDoc('dr-2'));
    const list = emr.listDocumentsChangedSince.bind(emr);
    let release!: () => void;
    const listing = new Promise<void>((r) => (release = r));
    emr.listDocumentsChangedSince = async (since) => {
      await listing;
      return list(since);
    };
    const service = countingService();
    const a = await replica(clock, emr, service);
    const b = await replica(clock, emr, service);
    const first = a.pusher.scanOnce();
    await new Promise((r) => setTimeout(r, 50)); // a holds the scan, waiting on the EMR
    expect(await b.pusher.scanOnce()).toBe(0);
    release();
    expect(await first).toBe(2);
  });

  it('wake the other replica when one enqueues a document, without waiting for its pause', async () => {
    const clock = createManualClock();
    const emr = createMemoryEmr();
    const service = countingService();
    const a = await replica(clock, emr, service);
    const b = await replica(clock, emr, service, { PUSHER_POLL_MS: '600000' });
    b.pusher.start();
    await new Promise((r) => setTimeout(r, 200)); // b's first pass is done, and it listens
    await a.pusher.enqueue('lab_report', request('lab-1'));
    await waitFor(async () => (await a.pusher.outbox.get('lab-1'))?.state === 'SENT' || undefined, 5_000, 10);
    expect(service.posts).toEqual(['lab-1']);
  });
});
