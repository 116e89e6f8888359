// End to end over loopback: the real simulator sends webhooks to the real adapter, which writes the real
// FHIR server and posts mappings back. One record per entity, newest state, through duplicates,
// reordering and an EMR outage.
import { afterEach, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../support/stack.ts';
import { waitFor } from '../support/wait.ts';

const SYSTEM = 'urn:emr-bridge:service';
let s: Stack | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

type Apt = {
  id: string;
  status: string;
  start: string;
  participant: { actor: { reference: string } }[];
  extension: { url: string; valueString?: string; extension?: { url: string; valueDecimal?: number; valueString?: string }[] }[];
};
type Snapshot = {
  serviceId: string;
  appointment: { externalId: string | null; serviceId: string };
  patient: { serviceId: string; externalId: string | null };
  doctor: { serviceId: string; externalId: string | null };
  location: { serviceId: string; externalId: string | null };
};

const byIdentifier = (st: Stack, type: string, serviceId: string) => st.fhirSearch<Apt>(`${type}?identifier=${encodeURIComponent(`${SYSTEM}|${serviceId}`)}`);

async function appointmentIn(st: Stack, serviceId: string, check: (a: Apt) => boolean = () => true, timeoutMs = 15_000): Promise<Apt> {
  return waitFor(async () => {
    const found = await byIdentifier(st, 'Appointment', serviceId);
    return found.length === 1 && check(found[0]!) ? found[0] : undefined;
  }, timeoutMs);
}

describe('service → adapter → FHIR', () => {
  it('claims a new appointment once, with its patient, practitioner and location, and maps it back', async () => {
    s = await startStack();
    const created = (await s.simPost<Snapshot>('/_sim/appointments', { clinicId: s.clinicId })).body;
    const apt = await appointmentIn(s, created.serviceId);
    for (const [type, entity] of [
      ['Patient', created.patient],
      ['Practitioner', created.doctor],
      ['Location', created.location],
    ] as const) {
      const records = await byIdentifier(s, type, entity.serviceId);
      expect(records, type).toHaveLength(1);
      expect(apt.participant.map((p) => p.actor.reference)).toContain(`${type}/${records[0]!.id}`);
    }
    // The mappings reach the service, and later events carry the externalIds.
    const mapped = await waitFor(async () => {
      const snap = (await s!.simGet<Snapshot>(`/_sim/appointments/${created.serviceId}`)).body;
      return snap.appointment.externalId && snap.patient.externalId && snap.doctor.externalId && snap.location.externalId ? snap : undefined;
    });
    expect(mapped.appointment.externalId).toBe(apt.id);
    await s.simPost(`/_sim/appointments/${created.serviceId}/cancel`);
    const deliveries = await waitFor(async () => {
      const log = (await s!.simGet<{ eventType: string; statusCode: number }[]>('/_sim/deliveries')).body;
      return log.some((d) => d.eventType === 'appointment.cancelled' && d.statusCode === 200) ? log : undefined;
    });
    expect(deliveries.every((d) => d.statusCode === 200)).toBe(true);
    await appointmentIn(s, created.serviceId, (a) => a.status === 'cancelled');
    expect(await byIdentifier(s, 'Appointment', created.serviceId)).toHaveLength(1);
  }, 30_000);

  it('reflects reschedule, payment, completion, no-show and cancellation', async () => {
    s = await startStack();
    const a = (await s.simPost<Snapshot>('/_sim/appointments', { clinicId: s.clinicId })).body.serviceId;
    await s.simPost(`/_sim/appointments/${a}/reschedule`, { startsAt: '2027-05-05T09:30:00.000Z', mode: 'Online' });
    await s.simPost(`/_sim/appointments/${a}/payment`, { type: 'Full', amountPaid: 80, balanceDue: 0 });
    const paid = await appointmentIn(s, a, (x) => x.start === '2027-05-05T09:30:00.000Z' && JSON.stringify(x.extension).includes('"valueDecimal":80'));
    expect(paid.extension.find((e) => e.url.endsWith('/appointment-mode'))?.valueString).toBe('Online');
    await s.simPost(`/_sim/appointments/${a}/complete`);
    await appointmentIn(s, a, (x) => x.status === 'fulfilled');
    const b = (await s.simPost<Snapshot>('/_sim/appointments', { clinicId: s.clinicId })).body.serviceId;
    await s.simPost(`/_sim/appointments/${b}/no-show`);
    await appointmentIn(s, b, (x) => x.status === 'noshow');
    const c = (await s.simPost<Snapshot>('/_sim/appointments', { clinicId: s.clinicId })).body.serviceId;
    await s.simPost(`/_sim/appointments/${c}/cancel`);
    await appointmentIn(s, c, (x) => x.status === 'cancelled');
  }, 30_000);

  it('ends with one record per entity in its newest state under duplicate and out-of-order delivery', async () => {
    s = await startStack();
    await s.simPost('/_sim/faults', { duplicateDeliveries: true, outOfOrder: true });
    const patient = (await s.simPost<{ serviceId: string }>('/_sim/patients', { clinicId: s.clinicId })).body;
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const a = (await s.simPost<Snapshot>('/_sim/appointments', { clinicId: s.clinicId, patient: { serviceId: patient.serviceId } })).body.serviceId;
      ids.push(a);
      await s.simPost(`/_sim/appointments/${a}/reschedule`, { startsAt: `2027-06-0${i + 1}T10:00:00.000Z` });
      await s.simPost(`/_sim/appointments/${a}/${i % 2 ? 'cancel' : 'complete'}`);
    }
    for (const [i, a] of ids.entries()) {
      const apt = await appointmentIn(s, a, (x) => x.status === (i % 2 ? 'cancelled' : 'fulfilled') && x.start === `2027-06-0${i + 1}T10:00:00.000Z`, 20_000);
      expect(apt).toBeDefined();
    }
    expect(await byIdentifier(s, 'Patient', patient.serviceId)).toHaveLength(1);
    const all = await s.fhirSearch<Apt>('Appointment?_count=100');
    expect(all).toHaveLength(4);
  }, 40_000);

  it('loses nothing while the EMR is down and drains the backlog when it returns', async () => {
    s = await startStack();
    await s.stopFhir();
    const a = (await s.simPost<Snapshot>('/_sim/appointments', { clinicId: s.clinicId })).body.serviceId;
    await s.simPost(`/_sim/appointments/${a}/reschedule`, { startsAt: '2027-07-07T07:00:00.000Z' });
    const b = (await s.simPost<Snapshot>('/_sim/appointments', { clinicId: s.clinicId })).body.serviceId;
    // Acknowledged while the EMR is down, and retrying, not dead.
    await waitFor(
      async () =>
        ((
          await s!.admin<{ state: string; attempts: number }>(
            'GET',
            `/events/${(await s!.simGet<{ eventId: string; eventType: string }[]>('/_sim/deliveries')).body.find((d) => d.eventType === 'appointment.created')?.eventId}`,
          )
        ).body.attempts ?? 0) >= 2,
    );
    const ready = await s.admin<{ events: unknown[] }>('GET', '/dead-letters');
    expect(ready.body.events).toHaveLength(0);
    await s.startFhir();
    await appointmentIn(s, a, (x) => x.start === '2027-07-07T07:00:00.000Z', 20_000);
    await appointmentIn(s, b, () => true, 20_000);
  }, 40_000);
});
