// A clinic with a roster and appointment hours (the vendor demo's, src/runtime/demo-clinic.ts): its doctors and
// locations made under the service ids given; an appointment that names none takes a roster doctor and that
// doctor's room (a doctor it names, the roster's rooms), and one given no start takes the first of the clinic's
// quarter hours a day ahead at which the doctor is free, in the clinic's time zone, across a daylight-saving
// change; a start or a new doctor a body names is kept as before.
import { afterEach, describe, expect, it } from 'vitest';
import { simulatorFixture } from '../support/simulator-fixture.ts';

type Booked = { appointment: { startsAt: string; startsAtLocal: string }; doctor: { serviceId: string; name: string }; location: { serviceId: string } };

const ROSTER = {
  doctors: [
    { serviceId: 'doc_okafor', name: 'Dr Amara Okafor' },
    { serviceId: 'doc_hartley', name: 'Dr Benjamin Hartley' },
  ],
  locations: [{ serviceId: 'loc_room1', name: 'Room 1' }],
};
const HOURS = { days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat'], opens: '08:00', closes: '18:00', slotMinutes: 15 };
const VENDOR_CLINIC = { timeZone: 'America/New_York', roster: ROSTER, appointmentHours: HOURS };

let f: Awaited<ReturnType<typeof simulatorFixture>> | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

async function book(body: Record<string, unknown> = {}): Promise<Booked> {
  const res = await f!
    .http()
    .post('/_sim/appointments')
    .send({ clinicId: f!.clinicId, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as Booked;
}

const summary = (b: Booked) => [b.doctor.serviceId, b.location.serviceId, b.appointment.startsAtLocal];

describe('a clinic with a roster and appointment hours', () => {
  it('books its own doctors, each free at its time: the first quarter hour a day ahead, then the next', async () => {
    // Tuesday 13 January 2026, 16:40 in New York: a day ahead is Wednesday 16:40, so 16:45 is the first start.
    f = await simulatorFixture({ start: '2026-01-13T21:40:00.000Z', clinic: VENDOR_CLINIC });

    const booked = [await book(), await book(), await book()];

    expect(booked.map(summary)).toEqual([
      ['doc_okafor', 'loc_room1', '2026-01-14T16:45:00.000-05:00'],
      ['doc_hartley', 'loc_room1', '2026-01-14T16:45:00.000-05:00'],
      ['doc_okafor', 'loc_room1', '2026-01-14T17:00:00.000-05:00'],
    ]);
    expect(booked[0]!.doctor.name).toBe('Dr Amara Okafor');
  });

  it('skips the clinic’s closed days and hours, and takes the local hours across a daylight-saving change', async () => {
    // Friday 6 March 2026, 17:50 in New York: a day ahead is Saturday 17:50, after the last start (17:45); Sunday is
    // closed, and on Monday 9 March the clocks have gone forward (EDT, -04:00).
    f = await simulatorFixture({ start: '2026-03-06T22:50:00.000Z', clinic: VENDOR_CLINIC });

    const first = await book({ doctor: { serviceId: 'doc_hartley' } });

    expect(summary(first)).toEqual(['doc_hartley', 'loc_room1', '2026-03-09T08:00:00.000-04:00']);
    expect(first.appointment.startsAt).toBe('2026-03-09T12:00:00.000Z');
  });

  it('frees a cancelled appointment’s time for the next, and keeps what a body names (a start, a new doctor)', async () => {
    f = await simulatorFixture({ start: '2026-01-13T21:40:00.000Z', clinic: VENDOR_CLINIC });
    const doctor = { serviceId: 'doc_okafor' };
    const cancelled = await book({ doctor });
    await f
      .http()
      .post(`/_sim/appointments/${(cancelled as unknown as { serviceId: string }).serviceId}/cancel`)
      .send({})
      .expect(200);

    const again = await book({ doctor });
    const given = await book({ startsAt: '2026-01-20T15:05:00.000Z' });
    const stranger = await book({ doctor: { name: 'Dr Visiting Locum' } });

    expect(again.appointment.startsAt).toBe(cancelled.appointment.startsAt);
    expect(summary(given)).toEqual(['doc_okafor', 'loc_room1', '2026-01-20T10:05:00.000-05:00']);
    expect(stranger.doctor.serviceId).toMatch(/^doc_[0-9a-f]{12}$/);
    // A doctor from outside the roster still sees patients in the clinic's own rooms.
    expect(stranger.location.serviceId).toBe('loc_room1');
  });

  it('refuses a roster id another clinic holds, or one listed twice, naming it, and makes no clinic', async () => {
    f = await simulatorFixture({ clinic: VENDOR_CLINIC });
    const taken = await f.http().post('/_sim/clinics').send({ roster: ROSTER });
    const twice = await f
      .http()
      .post('/_sim/clinics')
      .send({
        roster: {
          doctors: [
            { serviceId: 'doc_new', name: 'Dr New' },
            { serviceId: 'doc_new', name: 'Dr New' },
          ],
          locations: [{ serviceId: 'loc_room9', name: 'Room 9' }],
        },
      });

    expect(taken.status).toBe(400);
    expect(taken.body.error).toMatchObject({ code: 'invalid_request', field: 'roster.doctors.0.serviceId' });
    expect(twice.body.error.message).toBe('roster.doctors.1.serviceId: doc_new is listed twice');
    expect(f.sim.store.list('clinic')).toHaveLength(1);
  });

  it('refuses hours that close before they open', async () => {
    f = await simulatorFixture();
    const res = await f
      .http()
      .post('/_sim/clinics')
      .send({ appointmentHours: { ...HOURS, opens: '18:00', closes: '08:00' } });

    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ field: 'appointmentHours.closes' });
  });
});
