// An appointment event claimed in one EMR call where the port can (EmrPort.claimAppointment, src/processor/apply.ts):
// a new appointment with its unmapped records at once, leaving what claiming them one by one leaves (mappings,
// claims for the service, refs in order, the patient's snapshot version); a patient the service knows by an EMR id
// still adopted one by one, an appointment already mapped updated one by one; and, with the real FHIR server,
// one FHIR request for an appointment whose patient, doctor and location are all new.
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { startFhirServer } from '../../src/fhir-server/server.ts';
import { silentLogger } from '../../src/logger.ts';
import { applyThrough, appointmentEvent, processorFixture, type ProcessorFixture } from '../support/processor-fixture.ts';
import { plainFhirEmr } from '../../bench/support/fhir-emr.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** What the applied mark recorded of an event: the EMR records it named, in order (space-separated in the history). */
function appliedOf(f: ProcessorFixture, eventId: string) {
  const refs = f.db
    .prepare(
      "SELECT h.emr_refs FROM event_history h JOIN inbox_events e ON e.id = h.inbox_id WHERE e.event_id = ? AND h.state = 'applied' ORDER BY h.id DESC LIMIT 1",
    )
    .pluck()
    .get(eventId) as string | null;
  return { refs: refs ? refs.split(' ') : [] };
}

/** The events of one appointment, each of its participants' ids as given. */
function appointmentOf(serviceId: string, patient: { serviceId: string; externalId?: string | null; name?: string }, occurredAt = '2026-01-15T09:00:00.000Z') {
  const e = appointmentEvent({ serviceId, occurredAt });
  e.patient = { ...(e.patient as object), ...patient };
  return e;
}

describe('an appointment event claimed in one EMR call', () => {
  it('claims a new appointment, its patient, doctor and location in one call, leaving what one by one leaves', async () => {
    const together = processorFixture();
    const oneByOne = processorFixture();
    oneByOne.emr.transactions = false;
    const results = [];
    for (const f of [together, oneByOne]) {
      const id = f.store(appointmentOf('apt_1', { serviceId: 'pat_1' }));
      expect(await f.processor.runOnce()).toBe(1);
      results.push({
        calls: f.emr.calls,
        mappings: f.mappingsPut.map((m) => `${m.entityType}:${m.serviceId}:${m.externalId}`).sort(),
        refs: appliedOf(f, id).refs,
        versions: f.db.prepare('SELECT entity_key FROM entity_versions ORDER BY entity_key').pluck().all(),
      });
    }
    expect(results[0]!.calls).toBe(1);
    expect(results[1]!.calls).toBe(4);
    expect({ ...results[0], calls: 0 }).toEqual({ ...results[1], calls: 0 });
    expect(results[0]!.refs).toEqual(['Patient/patient-1', 'Practitioner/practitioner-2', 'Location/location-3', 'Appointment/appointment-4']);
    expect(results[0]!.versions).toContain('patient:pat_1');
  });

  it('names the records already mapped by their ids, and applies a changed patient snapshot to the patient record', async () => {
    const f = processorFixture();
    f.store(appointmentOf('apt_1', { serviceId: 'pat_1' }));
    await f.processor.runOnce();
    const patientId = f.emr.records.patient.get('pat_1')!.id;
    const calls = f.emr.calls;
    f.store(appointmentOf('apt_2', { serviceId: 'pat_1', name: 'Renamed Patient' }, '2026-01-15T10:00:00.000Z'));
    await f.processor.runOnce();
    // The claim (the appointment only), then the patient's new name.
    expect(f.emr.calls - calls).toBe(2);
    expect((f.emr.records.patient.get('pat_1')!.data as { name: string }).name).toBe('Renamed Patient');
    expect(f.emr.appointments().find((a) => a.serviceId === 'apt_2')!.patientId).toBe(patientId);
    expect(f.emr.records.practitioner.size).toBe(1);
    expect(f.mappingsPut.filter((m) => m.serviceId === 'apt_2')).toHaveLength(1);
  });

  it('adopts a patient the service knows by an EMR id one by one, never claiming another for it', async () => {
    const f = processorFixture();
    const own = f.emr.addEmrPatient({ name: 'Clerk Registered', phone: '+15550000001' });
    f.store(appointmentOf('apt_1', { serviceId: 'pat_1', externalId: own }));
    expect(await f.processor.runOnce()).toBe(1);
    expect(f.emr.records.patient.get('pat_1')!.id).toBe(own);
    expect(f.emr.appointments()[0]!.patientId).toBe(own);
    expect(f.emr.patients()).toHaveLength(1);
    // The patient is mapped now: the next appointment goes in one call.
    const calls = f.emr.calls;
    f.store(appointmentOf('apt_2', { serviceId: 'pat_1', externalId: own }));
    await f.processor.runOnce();
    expect(f.emr.calls - calls).toBe(1);
  });

  it('updates an appointment already mapped one by one, and one the EMR had (its mapping lost) from the one call', async () => {
    const f = processorFixture();
    f.store(appointmentOf('apt_1', { serviceId: 'pat_1' }));
    await f.processor.runOnce();
    const claim = f.emr.claimAppointment.bind(f.emr);
    let claims = 0;
    f.emr.claimAppointment = async (c) => {
      claims++;
      return claim(c);
    };
    const cancelled = appointmentEvent({ serviceId: 'apt_1', eventType: 'appointment.cancelled', status: 'Cancelled', occurredAt: '2026-01-15T10:00:00.000Z' });
    cancelled.patient = { ...(cancelled.patient as object), serviceId: 'pat_1' };
    f.store(cancelled);
    await f.processor.runOnce();
    expect(claims).toBe(0);
    expect(f.emr.appointments()[0]!.status).toBe('Cancelled');

    // The EMR has apt_2 (a claim whose mapping was lost): the one call finds it, and the event's snapshot is applied to it.
    const made = await claim({
      patient: { serviceId: 'pat_2', name: 'Second Patient', phone: '+15550000002' },
      practitioner: { serviceId: 'doc_1', name: 'Dr Test Doctor' },
      location: { serviceId: 'loc_1', name: 'Test Clinic Room 1' },
      appointment: {
        serviceId: 'apt_2',
        status: 'Pending',
        startsAt: '2026-01-20T09:00:00.000Z',
        mode: 'Offline',
        token: 'A-1',
        notes: '',
        payment: { type: 'Full', amountPaid: 30, balanceDue: 0, currency: 'EUR', payAtClinic: false },
        occurredAt: '2026-01-15T08:00:00.000Z',
      },
    });
    f.store(appointmentOf('apt_2', { serviceId: 'pat_2' }, '2026-01-15T11:00:00.000Z'));
    await f.processor.runOnce();
    expect(claims).toBe(1);
    expect(f.emr.appointments().find((a) => a.id === made!.appointment.id)!.status).toBe('Approved');
    expect(f.emr.records.appointment.size).toBe(2);
  });
});

describe('the processor on the bundled FHIR server', () => {
  /** A proxy on loopback in front of `upstream` that counts the requests it passes on. */
  async function countingProxy(upstream: string): Promise<{ url: string; requests: string[] }> {
    const requests: string[] = [];
    const server: Server = createServer((req, res) => {
      void (async () => {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        requests.push(`${req.method} ${req.url}`);
        const headers: Record<string, string> = {};
        for (const h of ['accept', 'content-type', 'if-none-exist']) if (typeof req.headers[h] === 'string') headers[h] = req.headers[h];
        const answer = await fetch(new URL(req.url ?? '/', upstream), {
          method: req.method ?? 'GET',
          headers,
          ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
        });
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/fhir+json' });
        res.end(Buffer.from(await answer.arrayBuffer()));
      })();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(
      () =>
        new Promise<void>((r) => {
          server.closeAllConnections();
          server.close(() => r());
        }),
    );
    return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, requests };
  }

  it('applies an appointment whose patient, doctor and location are all new with one FHIR request', async () => {
    const fhir = await startFhirServer({ logger: silentLogger() });
    cleanups.push(() => fhir.close());
    const proxy = await countingProxy(fhir.baseUrl);
    const fhirEmr = plainFhirEmr(proxy.url, { timeoutMs: 5_000, clock: createManualClock() });
    cleanups.push(() => fhirEmr.close());
    await fhirEmr.ping();

    // The processor's own fixture, with the FHIR adapter in place of the in-memory EMR.
    const f = processorFixture();
    applyThrough(f.emr, fhirEmr);
    const before = proxy.requests.length;
    const id = f.store(appointmentOf('apt_1', { serviceId: 'pat_1' }));
    expect(await f.processor.runOnce()).toBe(1);
    expect(f.state(id)?.state).toBe('applied');
    expect(proxy.requests.slice(before)).toEqual(['POST /']);
    expect(f.mappingsPut.map((m) => m.entityType).sort()).toEqual(['appointment', 'doctor', 'location', 'patient']);
    const emrId = (entityType: string) => f.mappingsPut.find((m) => m.entityType === entityType)!.externalId;
    expect(appliedOf(f, id).refs).toEqual([
      `Patient/${emrId('patient')}`,
      `Practitioner/${emrId('doctor')}`,
      `Location/${emrId('location')}`,
      `Appointment/${emrId('appointment')}`,
    ]);

    // A second appointment of the same patient, doctor and location: one request again, naming them by their ids.
    const next = proxy.requests.length;
    f.store(appointmentOf('apt_2', { serviceId: 'pat_1' }, '2026-01-15T10:00:00.000Z'));
    expect(await f.processor.runOnce()).toBe(1);
    expect(proxy.requests.slice(next)).toEqual(['POST /']);
  });
});
