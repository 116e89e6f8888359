// Two processors on one PostgreSQL database, as two replicas: every event applied once, each appointment's
// events in order (its final state right), one EMR record per entity even where the EMR's find-or-create is
// not atomic and both replicas meet the same new patient, doctor and location at once (claimed one by one, or
// with the appointment in one call each), each mapping queued once; and a replica that dies holding leases loses nothing: the other takes its events over once they run out.
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { createMemoryEmr, type MemoryEmr } from '../../src/emr/memory/index.ts';
import { silentLogger } from '../../src/logger.ts';
import { createProcessor, type Processor } from '../../src/processor/index.ts';
import type { ProcessorStores } from '../../src/storage/processor-stores.ts';
import { appointmentEvent, racyClaim } from '../support/processor-fixture.ts';
import { type OpenedEngine, postgresOnly } from '../storage/processor-engines.ts';

const LEASE_MS = 30_000;

/**
 * An EMR whose find-or-create looks, yields, then creates what it did not see: two callers at once make two
 * records. `made` lists the records it created.
 */
function racyEmr(): MemoryEmr & { made: string[] } {
  const emr = Object.assign(createMemoryEmr(), { made: [] as string[] });
  const racy = (kind: 'patient' | 'practitioner' | 'location') => async (input: { serviceId: string }) => {
    const seen = emr.records[kind].get(input.serviceId);
    await new Promise((r) => setTimeout(r, 3));
    if (seen) return { id: seen.id, created: false };
    const id = `${kind}-${emr.made.length + 1}`;
    emr.made.push(kind);
    emr.records[kind].set(input.serviceId, { id, data: input });
    return { id, created: true };
  };
  emr.ensurePatient = racy('patient');
  emr.ensurePractitioner = racy('practitioner');
  emr.ensureLocation = racy('location');
  emr.claimAppointment = racyClaim(emr, racy);
  return emr;
}

function processorOn(stores: ProcessorStores, e: OpenedEngine, emr: MemoryEmr, posted: string[]): Processor {
  return createProcessor({
    stores,
    clock: e.clock,
    logger: silentLogger(),
    emr,
    config: parseConfig({ PROCESSOR_CONCURRENCY: '4', PROCESSOR_LEASE_MS: String(LEASE_MS) }),
    random: () => 0.5,
    serviceClient: {
      async putMapping(entityType, serviceId) {
        posted.push(`${entityType}:${serviceId}`);
      },
    },
    documentEvents: { apply: async () => undefined },
  });
}

/** Runs both processors at once until nothing is left to do. */
async function drain(processors: Processor[]): Promise<void> {
  await Promise.all(
    processors.map(async (p) => {
      for (let idle = 0; idle < 3; ) idle = (await p.runOnce()) > 0 || (await p.depth()) > 0 ? 0 : idle + 1;
    }),
  );
}

describe.each(postgresOnly)('two processors on $name', (engine) => {
  let e: OpenedEngine;
  afterEach(async () => {
    await e?.close();
  });

  it.each([
    { path: 'in one call each', transactions: true },
    { path: 'one by one', transactions: false },
  ])('apply every event once, in order per appointment, with one EMR record per entity (claimed $path)', async ({ transactions }) => {
    e = await engine.open();
    const emr = racyEmr();
    emr.transactions = transactions;
    const posted: string[] = [];
    const processors = [processorOn(e.stores, e, emr, posted), processorOn(await e.replica!(), e, emr, posted)];
    for (let i = 0; i < 12; i++) {
      const created = appointmentEvent({ serviceId: `apt_${i}`, occurredAt: '2026-01-15T09:00:00.000Z' });
      // Every appointment names the same new patient: both replicas meet it at once.
      created.patient = { ...(created.patient as object), serviceId: 'pat_shared' };
      await e.store(created);
    }
    for (let i = 0; i < 12; i++) {
      const cancelled = appointmentEvent({
        serviceId: `apt_${i}`,
        eventType: 'appointment.cancelled',
        status: 'Cancelled',
        occurredAt: '2026-01-15T09:05:00.000Z',
      });
      cancelled.patient = { ...(cancelled.patient as object), serviceId: 'pat_shared' };
      await e.store(cancelled);
    }

    await drain(processors);

    const states = await e.query<{ state: string; n: number }>('SELECT state, count(*) AS n FROM processing GROUP BY state');
    expect(states).toEqual([{ state: 'applied', n: 24 }]);
    expect(emr.appointments()).toHaveLength(12);
    expect(emr.appointments().every((a) => a.status === 'Cancelled')).toBe(true);
    expect(emr.made.sort()).toEqual(['location', 'patient', 'practitioner']);
    expect(new Set(emr.appointments().map((a) => a.patientId)).size).toBe(1);
    // 12 appointments, the patient, the doctor and the location: each mapping queued, and posted, once.
    expect(posted.sort()).toEqual([...new Set(posted)].sort());
    expect(posted).toHaveLength(15);
  });

  it('takes over the events a replica that died was holding, once their leases run out, and never before', async () => {
    e = await engine.open();
    const emr = createMemoryEmr();
    const posted: string[] = [];
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await e.store(appointmentEvent({ serviceId: `apt_${i}` }))).eventId);
    // The replica that dies: it took the events in and claimed them, then nothing more.
    await e.stores.queue.intake();
    expect(await e.stores.queue.claim(10, LEASE_MS)).toHaveLength(3);
    const survivor = processorOn(await e.replica!(), e, emr, posted);
    expect(await survivor.recover()).toBe(0);
    expect(await survivor.runOnce()).toBe(0);
    e.clock.advance(LEASE_MS);
    expect(await survivor.runOnce()).toBe(3);
    expect(emr.appointments()).toHaveLength(3);
    expect(await e.query('SELECT DISTINCT state, attempts FROM processing')).toEqual([{ state: 'applied', attempts: 2 }]);
  });
});
