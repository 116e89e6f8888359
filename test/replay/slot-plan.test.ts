// Samples replayed at an adapter that books into the EMR's Slots (src/replay/slot-plan.ts): the roster records they
// name are mapped under the ids the replay sends, and each time of each appointment of a mapped doctor moves onto a
// free Slot of its own (the same appointment at the same time always onto the same one); what no crosswalk names
// is left as it is; too few free Slots stop the replay before anything is mapped or sent.
import { describe, expect, it } from 'vitest';
import { type FreeSlot, placeOnSlots, type RosterMapping, type SlotTarget } from '../../src/replay/slot-plan.ts';
import type { Sample } from '../../src/replay/samples.ts';

const T1 = '2026-03-02T09:00:00.000Z';
const T2 = '2026-03-03T14:00:00.000Z';
const OKAFOR = { serviceId: 'doc_okafor', externalId: null, name: 'Dr Amara Okafor' };
const LOCUM = { serviceId: 'doc_locum', externalId: null, name: 'Dr Visiting Locum' };
const ROOM = { serviceId: 'loc_room1', externalId: null, name: 'Room 1' };

function sample(name: string, eventType: string, appointment: string, startsAt: string, doctor = OKAFOR): Sample {
  const body = {
    eventType,
    appointment: { serviceId: appointment, startsAt, startsAtLocal: startsAt.replace('Z', '+00:00') },
    doctor,
    location: ROOM,
    patient: { serviceId: 'pat_1' },
  };
  return { name, description: name, steps: [{ description: name, expect: { http: 200 }, signature: 'valid', body }] };
}

/** Free Slots of New York's clinic from 8 o'clock on Monday 7 December 2026 (EST), a quarter hour apart. */
const slotsFrom = (count: number): FreeSlot[] =>
  Array.from({ length: count }, (_, i) => ({ start: new Date(Date.parse('2026-12-07T13:00:00Z') + i * 900_000).toISOString(), timeZone: 'America/New_York' }));

function target(free = 10) {
  const mapped: RosterMapping[][] = [];
  const asked: [string, number][] = [];
  const t: SlotTarget = {
    crosswalk: new Map([
      ['doctor:doc_okafor', 'pr-1001'],
      ['location:loc_room1', 'loc-2001'],
    ]),
    map: async (m) => void mapped.push(m),
    freeSlots: async (practitioner, count) => {
      asked.push([practitioner, count]);
      return slotsFrom(Math.min(free, count));
    },
  };
  return { t, mapped, asked };
}

const startOf = (s: Sample) => {
  const { startsAt, startsAtLocal } = s.steps[0]!.body!.appointment as { startsAt: string; startsAtLocal: string };
  return { startsAt, startsAtLocal };
};

describe('samples placed on Slots', () => {
  it('maps the roster records they name under the ids sent, and gives each appointment time a free Slot of its own', async () => {
    const { t, mapped, asked } = target();
    const lines: string[] = [];
    const samples = [
      sample('created', 'appointment.created', 'apt_1', T1),
      sample('rescheduled', 'appointment.rescheduled', 'apt_1', T2),
      sample('paid', 'appointment.payment_updated', 'apt_1', T2),
      sample('another at the same time', 'appointment.created', 'apt_2', T1),
    ];

    const placed = await placeOnSlots(
      samples,
      t,
      (id) => `${id}-fresh`,
      (l) => lines.push(l),
    );

    expect(mapped).toEqual([
      [
        { entityType: 'doctor', serviceId: 'doc_okafor-fresh', emrId: 'pr-1001' },
        { entityType: 'location', serviceId: 'loc_room1-fresh', emrId: 'loc-2001' },
      ],
    ]);
    expect(asked).toEqual([['pr-1001', 3]]);
    expect(placed.map(startOf)).toEqual([
      { startsAt: '2026-12-07T13:00:00.000Z', startsAtLocal: '2026-12-07T08:00:00.000-05:00' },
      { startsAt: '2026-12-07T13:15:00.000Z', startsAtLocal: '2026-12-07T08:15:00.000-05:00' },
      { startsAt: '2026-12-07T13:15:00.000Z', startsAtLocal: '2026-12-07T08:15:00.000-05:00' },
      { startsAt: '2026-12-07T13:30:00.000Z', startsAtLocal: '2026-12-07T08:30:00.000-05:00' },
    ]);
    expect(lines).toEqual([
      'booking into Slots: 1 doctors and 1 locations of the samples mapped as the crosswalk file maps them; 3 appointment times moved onto free Slots',
    ]);
  });

  it('leaves an appointment whose doctor no crosswalk names, and a sample without an appointment, as they are', async () => {
    const { t, asked } = target();
    const locum = sample('a locum', 'appointment.created', 'apt_9', T1, LOCUM);
    const patient: Sample = {
      name: 'patient',
      description: 'patient',
      steps: [{ description: 'p', expect: { http: 200 }, signature: 'valid', body: { eventType: 'patient.created' } }],
    };

    const placed = await placeOnSlots(
      [locum, patient],
      t,
      (id) => id,
      () => undefined,
    );

    expect(placed).toEqual([locum, patient]);
    expect(asked).toEqual([]);
  });

  it('stops before mapping anything when the practitioner has too few free Slots, naming it and both counts', async () => {
    const { t, mapped } = target(1);
    const samples = [sample('one', 'appointment.created', 'apt_1', T1), sample('two', 'appointment.created', 'apt_2', T1)];

    await expect(
      placeOnSlots(
        samples,
        t,
        (id) => id,
        () => undefined,
      ),
    ).rejects.toThrow('Practitioner/pr-1001 has 1 free Slots from now on; the samples need 2');
    expect(mapped).toEqual([]);
  });
});
