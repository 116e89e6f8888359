// End to end beside an EMR that owns its records (the bundled FHIR server's vendor profile, over HTTP with SMART
// sign-in): the real simulator, the real adapter. The adapter never asks such an EMR to create a practitioner or a
// location, nor sends If-None-Exist (the server counts what it was asked); an appointment whose doctor and
// location nobody has mapped waits with no attempt used and applies within 5 s of their mapping; one patient under
// duplicate deliveries and a concurrent patient.created is one chart.
import { afterEach, describe, expect, it } from 'vitest';
import { clinicTime } from '../support/clinic-time.ts';
import { type Stack, startStack } from '../support/stack.ts';
import { waitFor } from '../support/wait.ts';

const SYSTEM = 'urn:emr-bridge:service';

type Snapshot = { serviceId: string; doctor: { serviceId: string }; location: { serviceId: string }; patient: { serviceId: string } };
type Counters = { postPractitioner: number; postLocation: number; ifNoneExist: number; refused: Record<string, number> };
type EventList = { events: { eventId: string; state: string; attempts: number; waitingFor?: { entityType: string; serviceId: string } }[] };

let s: Stack | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
}, 30_000);

/** The adapter books appointments into the EMR's Slots, as such an EMR wants. */
const SLOT_BOOKING = { FHIR_APPOINTMENT_BOOKING: 'slot' };

const counters = async (stack: Stack) => (await fetch(`${stack.fhirUrl()}/_control/counters`)).json() as Promise<Counters>;

describe('beside an EMR that owns its doctors and locations', () => {
  it('waits for an unmapped doctor with no attempt used, applies within 5 s of the mapping, and never asks the EMR to create master data', async () => {
    s = await startStack({ fhirProfile: 'vendor', settings: SLOT_BOOKING });
    const stack = s;
    const created = (
      await stack.simPost<Snapshot>('/_sim/appointments', {
        clinicId: stack.clinicId,
        startsAt: clinicTime(2, 10),
        doctor: { name: 'Dr Amara Okafor' },
        location: { name: 'Room 1' },
      })
    ).body;

    const waiting = await waitFor(async () => {
      const list = (await stack.admin<EventList>('GET', '/events?state=waiting')).body.events;
      return list.length === 1 ? list[0] : undefined;
    }, 10_000);
    expect(waiting).toMatchObject({ attempts: 0, waitingFor: { entityType: 'doctor', serviceId: created.doctor.serviceId } });

    const mappedAt = Date.now();
    expect((await stack.admin('PUT', `/crosswalk/doctor/${created.doctor.serviceId}`, { emrId: 'pr-1001' })).status).toBe(200);
    expect((await stack.admin('PUT', `/crosswalk/location/${created.location.serviceId}`, { emrId: 'loc-2001' })).status).toBe(200);
    const [appointment] = await waitFor(async () => {
      const found = await stack.fhirSearch<{ participant: { actor: { reference: string } }[] }>(`Appointment?identifier=${SYSTEM}|${created.serviceId}`);
      return found.length ? found : undefined;
    }, 5_000);
    const appliedWithin = Date.now() - mappedAt;

    expect(appliedWithin).toBeLessThan(5_000);
    // Booked as a scheduling EMR wants it: one Slot of the mapped doctor's Schedule, the patient its one participant.
    expect(appointment!.participant.map((p) => p.actor.reference.split('/')[0])).toEqual(['Patient']);
    expect((appointment as unknown as { slot: { reference: string }[] }).slot).toHaveLength(1);
    expect(await counters(stack)).toMatchObject({ postPractitioner: 0, postLocation: 0, ifNoneExist: 0 });
  }, 40_000);

  it('makes one chart for one patient under duplicate deliveries of three appointments and a concurrent patient.created', async () => {
    s = await startStack({ fhirProfile: 'vendor', settings: SLOT_BOOKING });
    const stack = s;
    // The doctor and location are mapped once the first appointment names them; the others name the same two.
    await stack.simPost('/_sim/faults', { duplicateDeliveries: true, outOfOrder: true });
    const patient = (await stack.simPost<{ serviceId: string }>('/_sim/patients', { clinicId: stack.clinicId })).body;
    const first = (
      await stack.simPost<Snapshot>('/_sim/appointments', { clinicId: stack.clinicId, startsAt: clinicTime(3, 9), patient: { serviceId: patient.serviceId } })
    ).body;
    await stack.admin('PUT', `/crosswalk/doctor/${first.doctor.serviceId}`, { emrId: 'pr-1002' });
    await stack.admin('PUT', `/crosswalk/location/${first.location.serviceId}`, { emrId: 'loc-2002' });
    const others = await Promise.all(
      [0, 1].map(
        async (i) =>
          (
            await stack.simPost<Snapshot>('/_sim/appointments', {
              clinicId: stack.clinicId,
              startsAt: clinicTime(3, 11, 15 * i),
              patient: { serviceId: patient.serviceId },
              doctor: { serviceId: first.doctor.serviceId },
              location: { serviceId: first.location.serviceId },
            })
          ).body,
      ),
    );

    for (const a of [first, ...others])
      await waitFor(async () => ((await stack.fhirSearch(`Appointment?identifier=${SYSTEM}|${a.serviceId}`)).length ? true : undefined), 15_000);
    const charts = await stack.fhirSearch(`Patient?identifier=${SYSTEM}|${patient.serviceId}`);

    expect(charts).toHaveLength(1);
    expect(await counters(stack)).toMatchObject({ postPractitioner: 0, postLocation: 0, ifNoneExist: 0 });
  }, 60_000);
});
