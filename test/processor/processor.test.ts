// The processor with a manual clock: applying and claiming, dedupe across a crash, stale snapshots,
// per-entity order without head-of-line blocking, backoff, dead letters with one alert, leases.
import { describe, expect, it } from 'vitest';
import { UnavailableError } from '../../src/errors.ts';
import { appointmentEvent, processorFixture, racyClaim } from '../support/processor-fixture.ts';
import { waitFor } from '../support/wait.ts';

/** An appointment event whose patient is the one shared patient, in the snapshot `name`. */
function withPatient(occurredAt: string, serviceId: string, name: string) {
  const e = appointmentEvent({ serviceId, occurredAt });
  e.patient = { ...(e.patient as object), serviceId: 'pat_shared', name };
  return e;
}

describe('processor', () => {
  it('applies an appointment.created into the EMR and posts the four mappings back', async () => {
    const f = processorFixture();
    const id = f.store(appointmentEvent());
    expect(await f.processor.runOnce()).toBe(1);
    expect(f.state(id)?.state).toBe('applied');
    expect(f.emr.appointments()).toHaveLength(1);
    expect(f.emr.appointments()[0]).toMatchObject({ serviceId: 'apt_1', status: 'Approved' });
    expect(f.mappingsPut.map((m) => m.entityType).sort()).toEqual(['appointment', 'doctor', 'location', 'patient']);
    const apt = f.mappingsPut.find((m) => m.entityType === 'appointment')!;
    expect(apt.externalId).toBe(f.emr.appointments()[0]!.id);
  });

  it('posts no mapping for entities the service already has mapped', async () => {
    const f = processorFixture();
    f.store(appointmentEvent({ externalIds: true }));
    await f.processor.runOnce();
    expect(f.mappingsPut).toEqual([]);
    expect(f.emr.appointments()).toHaveLength(1);
  });

  it.each([
    { path: 'in one call', transactions: true },
    { path: 'one by one', transactions: false },
  ])('repeats nothing harmful when it dies between the EMR write and the applied mark (records claimed $path)', async ({ transactions }) => {
    const f = processorFixture();
    f.emr.transactions = transactions;
    let crashOnce = true;
    /** The EMR takes the write, and the answer is lost, once. */
    const losingTheFirstAnswer =
      <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
      async (...args: A): Promise<R> => {
        const r = await call(...args);
        if (crashOnce) {
          crashOnce = false;
          throw new UnavailableError('connection lost after the write');
        }
        return r;
      };
    f.emr.ensureAppointment = losingTheFirstAnswer(f.emr.ensureAppointment.bind(f.emr));
    f.emr.claimAppointment = losingTheFirstAnswer(f.emr.claimAppointment.bind(f.emr));
    const id = f.store(appointmentEvent());
    await f.processor.runOnce();
    expect(f.state(id)?.state).toBe('retrying');
    f.clock.advance(10_000);
    await f.processor.runOnce();
    expect(f.state(id)?.state).toBe('applied');
    expect(f.emr.records.appointment.size).toBe(1);
    expect(f.emr.records.patient.size).toBe(1);
    expect(new Set(f.mappingsPut.map((m) => `${m.entityType}:${m.serviceId}`)).size).toBe(f.mappingsPut.length);
    expect(f.mappingsPut).toHaveLength(4);
  });

  it('discards an older snapshot that arrives after a newer one, without error', async () => {
    const f = processorFixture();
    f.store(appointmentEvent({ occurredAt: '2026-01-15T10:00:00.000Z', startsAt: '2026-03-01T10:00:00.000Z', eventType: 'appointment.rescheduled' }));
    const old = f.store(appointmentEvent({ occurredAt: '2026-01-15T09:00:00.000Z', startsAt: '2026-02-01T10:00:00.000Z' }));
    await f.processor.runOnce();
    expect(f.state(old)).toMatchObject({ state: 'discarded_stale' });
    expect(f.emr.appointments()[0]!.startsAt).toBe('2026-03-01T10:00:00.000Z');
  });

  it('applies one entity in order and lets a failing entity hold back only itself', async () => {
    const f = processorFixture();
    const ensure = f.emr.ensureAppointment.bind(f.emr);
    const claim = f.emr.claimAppointment.bind(f.emr);
    let aDown = true;
    const refuseA = (serviceId: string) => {
      if (aDown && serviceId === 'apt_A') throw new UnavailableError('EMR shard for A is down');
    };
    f.emr.ensureAppointment = async (a) => {
      refuseA(a.serviceId);
      return ensure(a);
    };
    f.emr.claimAppointment = async (c) => {
      refuseA(c.appointment.serviceId);
      return claim(c);
    };
    const a1 = f.store(appointmentEvent({ serviceId: 'apt_A', occurredAt: '2026-01-15T09:00:00.000Z' }));
    const b1 = f.store(appointmentEvent({ serviceId: 'apt_B' }));
    const a2 = f.store(
      appointmentEvent({ serviceId: 'apt_A', eventType: 'appointment.cancelled', status: 'Cancelled', occurredAt: '2026-01-15T09:05:00.000Z' }),
    );
    await f.processor.runOnce();
    expect(f.state(a1)?.state).toBe('retrying');
    expect(f.state(b1)?.state).toBe('applied');
    expect(f.state(a2)?.state).toBe('pending');
    aDown = false;
    f.clock.advance(60_000);
    await f.processor.runOnce();
    expect(f.state(a1)?.state).toBe('applied');
    expect(f.state(a2)?.state).toBe('applied');
    expect(f.emr.appointments().find((a) => a.serviceId === 'apt_A')!.status).toBe('Cancelled');
  });

  it('retries on a capped, jittered backoff read from the clock', async () => {
    const f = processorFixture();
    f.emr.down = true;
    const id = f.store(appointmentEvent());
    await f.processor.runOnce();
    // attempt 1 failed: cap = 1000 ms, delay = 500 + 0.5 * 500 with random() = 0.5
    const first = f.state(id)!;
    expect(first.attempts).toBe(1);
    expect(first.next_attempt_at - f.clock.now()).toBe(750);
    f.clock.advance(749);
    await f.processor.runOnce();
    expect(f.state(id)!.attempts).toBe(1);
    f.clock.advance(1);
    await f.processor.runOnce();
    expect(f.state(id)!.attempts).toBe(2);
    expect(f.state(id)!.next_attempt_at - f.clock.now()).toBe(1500);
  });

  it('parks an event as a dead letter after the configured attempts, with exactly one alert', async () => {
    const f = processorFixture();
    f.emr.down = true;
    const id = f.store(appointmentEvent());
    for (let i = 0; i < 10; i++) {
      await f.processor.runOnce();
      f.clock.advance(60_000);
    }
    expect(f.state(id)).toMatchObject({ state: 'dead', attempts: 4 });
    expect(f.state(id)!.last_error).toMatch(/emr_unavailable/);
    expect(f.logLines().filter((l) => l.alert === true)).toHaveLength(1);
    expect(await f.metrics.registry.getSingleMetricAsString('emr_bridge_processor_alerts_total')).toMatch(/kind="event"} 1/);
  });

  it('takes over an event whose lease ran out (a crash mid-apply)', async () => {
    const f = processorFixture({ PROCESSOR_LEASE_MS: '30000' });
    const id = f.store(appointmentEvent());
    await f.processor.depth();
    // A worker that claimed the event and died: the lease is held, nobody finishes it.
    f.db
      .prepare("INSERT INTO processing (inbox_id, entity_key, state, attempts, lease_until) SELECT id, 'appointment:apt_1', 'pending', 1, ? FROM inbox_events")
      .run(f.clock.now() + 30_000);
    f.db.prepare('UPDATE processor_cursor SET last_inbox_id = (SELECT max(id) FROM inbox_events)').run();
    await f.processor.runOnce();
    expect(f.state(id)?.state).toBe('pending');
    f.clock.advance(30_000);
    await f.processor.runOnce();
    expect(f.state(id)).toMatchObject({ state: 'applied', attempts: 2 });
  });

  it('takes over at once, when started, the events a process that died was holding', async () => {
    const f = processorFixture({ PROCESSOR_LEASE_MS: '30000', PROCESSOR_POLL_MS: '10' });
    const id = f.store(appointmentEvent());
    f.db
      .prepare("INSERT INTO processing (inbox_id, entity_key, state, attempts, lease_until) SELECT id, 'appointment:apt_1', 'pending', 1, ? FROM inbox_events")
      .run(f.clock.now() + 30_000);
    f.db.prepare('UPDATE processor_cursor SET last_inbox_id = (SELECT max(id) FROM inbox_events)').run();
    f.processor.start();
    await waitFor(() => f.state(id)?.state === 'applied' || undefined);
    await f.processor.stop();
    expect(f.state(id)).toMatchObject({ state: 'applied', attempts: 2 });
    expect(f.logLines().some((l) => l.msg === 'took over events held by a process that stopped' && l.released === 1)).toBe(true);
  });

  it('applies a newer snapshot of the patient to the existing record, and ignores an older one', async () => {
    const f = processorFixture();
    f.store(withPatient('2026-01-15T09:00:00.000Z', 'apt_1', 'First Name'));
    await f.processor.runOnce();
    f.store(withPatient('2026-01-15T10:00:00.000Z', 'apt_2', 'Renamed Patient'));
    await f.processor.runOnce();
    f.store(withPatient('2026-01-15T09:30:00.000Z', 'apt_3', 'Stale Name'));
    await f.processor.runOnce();
    expect(f.emr.records.patient.size).toBe(1);
    expect((f.emr.records.patient.get('pat_shared')!.data as { name: string }).name).toBe('Renamed Patient');
  });

  it.each([
    { path: 'in one call each', transactions: true },
    { path: 'one by one', transactions: false },
  ])('makes one record per entity when concurrent events name the same new doctor, location and patient (claimed $path)', async ({ transactions }) => {
    const f = processorFixture();
    f.emr.transactions = transactions;
    // An EMR whose find-or-create is not atomic: it looks, yields, then creates whatever it did not see.
    const made: string[] = [];
    const racy = (kind: 'patient' | 'practitioner' | 'location') => async (input: { serviceId: string }) => {
      const seen = f.emr.records[kind].get(input.serviceId);
      await new Promise((r) => setTimeout(r, 5));
      if (seen) return { id: seen.id, created: false };
      const id = `${kind}-${made.length + 1}`;
      made.push(kind);
      f.emr.records[kind].set(input.serviceId, { id, data: input });
      return { id, created: true };
    };
    f.emr.ensurePatient = racy('patient');
    f.emr.ensurePractitioner = racy('practitioner');
    f.emr.ensureLocation = racy('location');
    f.emr.claimAppointment = racyClaim(f.emr, racy);
    for (const serviceId of ['apt_1', 'apt_2', 'apt_3']) {
      const e = appointmentEvent({ serviceId });
      e.patient = { ...(e.patient as object), serviceId: 'pat_shared' };
      f.store(e);
    }
    expect(await f.processor.runOnce()).toBe(3);
    expect(made.sort()).toEqual(['location', 'patient', 'practitioner']);
    expect(new Set(f.emr.appointments().map((a) => a.practitionerId)).size).toBe(1);
    const posted = f.mappingsPut.filter((m) => m.entityType === 'doctor').map((m) => m.externalId);
    expect(new Set(posted)).toEqual(new Set([f.emr.records.practitioner.get('doc_1')!.id]));
  });

  it('never lets an older patient snapshot, applied at the same moment as a newer one, land last', async () => {
    const f = processorFixture();
    f.store(withPatient('2026-01-15T09:00:00.000Z', 'apt_0', 'First Name'));
    await f.processor.runOnce();
    // The older snapshot's write is the slow one, so without one step per patient it would land last.
    const update = f.emr.updatePatient.bind(f.emr);
    f.emr.updatePatient = async (id, p) => {
      if (p.name === 'Older Name') await new Promise((r) => setTimeout(r, 20));
      return update(id, p);
    };
    f.store(withPatient('2026-01-15T10:00:00.000Z', 'apt_1', 'Newer Name'));
    f.store(withPatient('2026-01-15T09:30:00.000Z', 'apt_2', 'Older Name'));
    expect(await f.processor.runOnce()).toBe(2);
    expect((f.emr.records.patient.get('pat_shared')!.data as { name: string }).name).toBe('Newer Name');
  });

  it('keeps unknown enumeration values and extra keys', async () => {
    const f = processorFixture();
    const e = appointmentEvent({ status: 'Tentative' });
    (e.appointment as Record<string, unknown>).futureField = { x: 1 };
    f.store(e);
    await f.processor.runOnce();
    expect(f.emr.appointments()[0]!.status).toBe('Tentative');
  });

  it('passes document events to the document sink', async () => {
    const f = processorFixture();
    const id = f.store({
      eventId: '6f1e3b7a-1c2d-4e5f-8a9b-0c1d2e3f4a5b',
      eventType: 'document.delivered',
      occurredAt: '2026-01-15T10:00:00.000Z',
      clinicId: 'clinic_1',
      document: {
        serviceId: 'doc_s1',
        externalId: 'dr-1',
        documentType: 'lab_report',
        patientServiceId: 'pat_1',
        status: 'SENT',
        sentAt: '2026-01-15T10:00:00.000Z',
      },
    });
    await f.processor.runOnce();
    expect(f.state(id)?.state).toBe('applied');
    expect(f.documentEvents.map((d) => d.document.externalId)).toEqual(['dr-1']);
  });
});
