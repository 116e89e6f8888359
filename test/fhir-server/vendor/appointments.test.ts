// Booking on the vendor profile over HTTP, as Oracle Health Millennium documents it: an Appointment booked into one
// free Slot for one participant (the Patient, accepted, no type) takes the Slot's times and makes it busy; every
// other shape refused with 422 and an OperationOutcome naming what is wrong, a Slot already taken with 409; a
// cancellation frees the Slot, a no-show or a fulfilled one keeps it; a reschedule replaces /slot, freeing the old.
import { describe, expect, it } from 'vitest';
import { book, booking, call, createPatient, freeSlot, readSlot, search, startVendor, why } from './support.ts';

const MONDAY_9AM = '2026-03-09T13:00:00Z';
const MONDAY_10AM = '2026-03-09T14:00:00Z';
const MONDAY_11AM = '2026-03-09T15:00:00Z';

const counters = async (base: string) => (await call<{ refused: Record<string, number> }>(base, 'GET', '_control/counters')).body;
const patch = (base: string, id: string, etag: string, operations: unknown[]) => call(base, 'PATCH', `Appointment/${id}`, operations, { 'if-match': etag });
const appointmentCount = async (base: string) => (await search(base, 'Appointment?_count=1')).total;

describe('vendor profile: booking an Appointment', () => {
  it('books it into the free Slot: 201 with Location and ETag, the Slot busy, start and end the Slot’s', async () => {
    const { base } = await startVendor();
    const slot = await freeSlot(base, MONDAY_9AM);
    const patientId = await createPatient(base);
    const created = await call(base, 'POST', 'Appointment', booking(slot.id, patientId, { identifier: [{ system: 'urn:test', value: 'apt_1' }] }));
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/Appointment/${created.body.id}`);
    expect(created.etag).toBe(`W/"${created.body.meta?.versionId}"`);
    expect(created.body).toMatchObject({ status: 'booked', start: slot.start, end: slot.end, identifier: [{ system: 'urn:test', value: 'apt_1' }] });
    expect((await readSlot(base, slot.id)).status).toBe('busy');
    const read = await call(base, 'GET', `Appointment/${created.body.id}`);
    expect(read.etag).toBe(created.etag);
  });

  it('finds a booking again by its identifier, or by its patient and its Slot (a client whose answer was lost)', async () => {
    const { base } = await startVendor();
    const slot = await freeSlot(base, MONDAY_9AM);
    const patientId = await createPatient(base);
    const created = await call(base, 'POST', 'Appointment', booking(slot.id, patientId, { identifier: [{ system: 'urn:test', value: 'apt_1' }] }));
    await book(base, MONDAY_10AM);
    const ids = async (query: string) => ((await search<{ id: string }>(base, query)).entry ?? []).map((e) => e.resource.id);
    expect(await ids('Appointment?identifier=urn:test|apt_1')).toEqual([created.body.id]);
    expect(await ids(`Appointment?patient=Patient/${patientId}&slot=Slot/${slot.id}`)).toEqual([created.body.id]);
  });

  it('takes a start and an end the client gives when they are the Slot’s, however written', async () => {
    const { base } = await startVendor();
    const slot = await freeSlot(base, MONDAY_9AM);
    const created = await call(base, 'POST', 'Appointment', booking(slot.id, await createPatient(base), { start: '2026-03-09T09:00:00-04:00', end: slot.end }));
    expect(created.status).toBe(201);
    expect(created.body.start).toBe(slot.start);
  });

  // [what, the one thing changed, what the refusal names]
  const refusals: [string, (slotId: string, patientId: string) => Record<string, unknown>, RegExp][] = [
    ['status proposed', (s, p) => booking(s, p, { status: 'proposed' }), /status must be booked/],
    ['no slot', (s, p) => booking(s, p, { slot: undefined }), /exactly one reference to a Slot.*holds 0/],
    ['two slots', (s, p) => booking(s, p, { slot: [{ reference: `Slot/${s}` }, { reference: 'Slot/sch-3001-20260309T1315Z' }] }), /holds 2/],
    ['a slot that names no Slot', (s, p) => booking(s, p, { slot: [{ reference: 'Practitioner/pr-1001' }] }), /exactly one reference to a Slot/],
    ['a Slot that does not exist', (_s, p) => booking('sch-3001-20260308T1300Z', p), /Slot\/sch-3001-20260308T1300Z does not exist/],
    [
      'a practitioner beside the patient',
      (s, p) =>
        booking(s, p, {
          participant: [
            { actor: { reference: `Patient/${p}` }, status: 'accepted' },
            { actor: { reference: 'Practitioner/pr-1001' }, status: 'accepted' },
          ],
        }),
      /exactly one participant, the Patient.*holds 2/,
    ],
    [
      'a practitioner instead of the patient',
      (s) => booking(s, 'x', { participant: [{ actor: { reference: 'Practitioner/pr-1001' }, status: 'accepted' }] }),
      /the Patient/,
    ],
    [
      'the patient needing action',
      (s, p) => booking(s, p, { participant: [{ actor: { reference: `Patient/${p}` }, status: 'needs-action' }] }),
      /must be accepted, not needs-action/,
    ],
    [
      'a participant type',
      (s, p) => booking(s, p, { participant: [{ actor: { reference: `Patient/${p}` }, status: 'accepted', type: [{ text: 'patient' }] }] }),
      /type must not be set/,
    ],
    ['a patient that does not exist', (s) => booking(s, 'no-such-patient'), /Patient\/no-such-patient does not exist/],
    ['a start that is not the Slot’s', (s, p) => booking(s, p, { start: MONDAY_10AM }), /start 2026-03-09T14:00:00Z is not its Slot's/],
  ];

  it.each(refusals)('refuses %s with 422, books nothing and counts it', async (_what, build, reason) => {
    const { base } = await startVendor();
    const slot = await freeSlot(base, MONDAY_9AM);
    const answer = await call(base, 'POST', 'Appointment', build(slot.id, await createPatient(base)));
    expect(answer.status).toBe(422);
    expect(answer.body.issue?.[0]?.code).toBe('business-rule');
    expect(why(answer)).toMatch(reason);
    expect((await readSlot(base, slot.id)).status).toBe('free');
    expect(await appointmentCount(base)).toBe(0);
    expect((await counters(base)).refused).toEqual({ 'POST Appointment': 1 });
  });

  it('refuses a second booking of a Slot with 409: one Appointment, the Slot busy for the first', async () => {
    const { base } = await startVendor();
    const first = await book(base, MONDAY_9AM);
    const second = await call(base, 'POST', 'Appointment', booking(first.slot.id, await createPatient(base)));
    expect(second.status).toBe(409);
    expect(second.body.issue?.[0]?.code).toBe('conflict');
    expect(why(second)).toMatch(`Slot/${first.slot.id} is busy, not free`);
    expect(await appointmentCount(base)).toBe(1);
  });
});

describe('vendor profile: an Appointment’s status', () => {
  it('frees the Slot when the appointment is cancelled, so another patient can book it', async () => {
    const { base } = await startVendor();
    const booked = await book(base, MONDAY_9AM);
    const cancelled = await patch(base, booked.id, booked.etag, [{ op: 'replace', path: '/status', value: 'cancelled' }]);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    expect((await readSlot(base, booked.slot.id)).status).toBe('free');
    expect((await call(base, 'POST', 'Appointment', booking(booked.slot.id, await createPatient(base)))).status).toBe(201);
  });

  it.each(['noshow', 'fulfilled', 'checked-in'])('keeps the Slot busy when the appointment becomes %s', async (status) => {
    const { base } = await startVendor();
    const booked = await book(base, MONDAY_9AM);
    expect((await patch(base, booked.id, booked.etag, [{ op: 'replace', path: '/status', value: status }])).status).toBe(200);
    expect((await readSlot(base, booked.slot.id)).status).toBe('busy');
  });

  it.each([
    ['cancelled', 'booked'],
    ['fulfilled', 'cancelled'],
    ['noshow', 'fulfilled'],
  ])('refuses to take a %s appointment to %s: it is final', async (final, next) => {
    const { base } = await startVendor();
    const booked = await book(base, MONDAY_9AM);
    const done = await patch(base, booked.id, booked.etag, [{ op: 'replace', path: '/status', value: final }]);
    const refused = await patch(base, booked.id, done.etag!, [{ op: 'replace', path: '/status', value: next }]);
    expect(refused.status).toBe(422);
    expect(why(refused)).toMatch(`goes from ${final} to nothing (it is final), not to ${next}`);
  });

  it('takes the same status again as a change that changes nothing of the Slot', async () => {
    const { base } = await startVendor();
    const booked = await book(base, MONDAY_9AM);
    const cancelled = await patch(base, booked.id, booked.etag, [{ op: 'replace', path: '/status', value: 'cancelled' }]);
    await book(base, MONDAY_9AM);
    expect((await patch(base, booked.id, cancelled.etag!, [{ op: 'replace', path: '/status', value: 'cancelled' }])).status).toBe(200);
    expect((await readSlot(base, booked.slot.id)).status).toBe('busy');
  });
});

describe('vendor profile: rescheduling by replacing /slot', () => {
  it('moves the appointment to the new free Slot twice: each new Slot busy, each old one free, start and end following', async () => {
    const { base } = await startVendor();
    const booked = await book(base, MONDAY_9AM);
    const ten = await freeSlot(base, MONDAY_10AM);
    const moved = await patch(base, booked.id, booked.etag, [{ op: 'replace', path: '/slot', value: [{ reference: `Slot/${ten.id}` }] }]);
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ status: 'booked', start: ten.start, end: ten.end, slot: [{ reference: `Slot/${ten.id}` }] });
    expect([(await readSlot(base, booked.slot.id)).status, (await readSlot(base, ten.id)).status]).toEqual(['free', 'busy']);
    const eleven = await freeSlot(base, MONDAY_11AM, 'pr-1002');
    const again = await patch(base, booked.id, moved.etag!, [{ op: 'replace', path: '/slot/0/reference', value: `Slot/${eleven.id}` }]);
    expect(again.body).toMatchObject({ start: eleven.start, slot: [{ reference: `Slot/${eleven.id}` }] });
    expect([(await readSlot(base, ten.id)).status, (await readSlot(base, eleven.id)).status]).toEqual(['free', 'busy']);
  });

  it('refuses a move to a Slot already booked with 409, changing nothing', async () => {
    const { base } = await startVendor();
    const booked = await book(base, MONDAY_9AM);
    const other = await book(base, MONDAY_10AM);
    const refused = await patch(base, booked.id, booked.etag, [{ op: 'replace', path: '/slot/0/reference', value: `Slot/${other.slot.id}` }]);
    expect(refused.status).toBe(409);
    expect((await call(base, 'GET', `Appointment/${booked.id}`)).etag).toBe(booked.etag);
    expect((await readSlot(base, booked.slot.id)).status).toBe('busy');
  });

  it.each([
    ['to move a cancelled appointment to another Slot', [{ op: 'replace', path: '/status', value: 'cancelled' }], /only a booked appointment moves/],
    ['a new start without a new Slot', [], /start and end are its Slot's/],
  ])('refuses %s', async (_what, first, reason) => {
    const { base } = await startVendor();
    const booked = await book(base, MONDAY_9AM);
    const ten = await freeSlot(base, MONDAY_10AM);
    const etag = first.length ? (await patch(base, booked.id, booked.etag, first)).etag! : booked.etag;
    const move = first.length ? [{ op: 'replace', path: '/slot/0/reference', value: `Slot/${ten.id}` }] : [{ op: 'replace', path: '/start', value: ten.start }];
    const refused = await patch(base, booked.id, etag, move);
    expect(refused.status).toBe(422);
    expect(why(refused)).toMatch(reason);
    expect((await readSlot(base, ten.id)).status).toBe('free');
  });
});
