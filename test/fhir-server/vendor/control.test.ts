// The vendor profile's staff edits over HTTP (POST /_control/staff-edit/{type}/{id} with a JSON Patch, PUT with a
// whole record): a change as the EMR's own staff make it, with no If-Match and no rule, bumps the version, so a
// client's PATCH under the version before gets 412 and succeeds once made again on the record as it is now; a Slot
// blocked, opened again, or made outside the clinic hours is what the Slot search and a booking see.
import { describe, expect, it } from 'vitest';
import { book, booking, call, createPatient, freeSlot, search, startVendor, why } from './support.ts';

const MONDAY_9AM = '2026-03-09T13:00:00Z';
const staffEdit = (base: string, path: string, operations: unknown) =>
  call(base, 'POST', `_control/staff-edit/${path}`, operations, { 'content-type': 'application/json' });
const freeAt = (startsAt: string) => `Slot?schedule.actor=Practitioner/pr-1001&start=eq${startsAt}&status=free`;

describe('vendor profile: staff edits', () => {
  it("bumps the version, so the client's next PATCH under the old one gets 412, and succeeds on the record as it is now", async () => {
    const { base } = await startVendor();
    const booked = await book(base, MONDAY_9AM);
    const edit = await staffEdit(base, `Appointment/${booked.id}`, [{ op: 'add', path: '/comment', value: 'Patient asked for a ground-floor room' }]);
    expect(edit.status).toBe(200);
    expect(edit.etag).not.toBe(booked.etag);
    const stale = await call(base, 'PATCH', `Appointment/${booked.id}`, [{ op: 'replace', path: '/status', value: 'cancelled' }], { 'if-match': booked.etag });
    expect(stale.status).toBe(412);
    const now = await call(base, 'GET', `Appointment/${booked.id}`);
    const again = await call(base, 'PATCH', `Appointment/${booked.id}`, [{ op: 'replace', path: '/status', value: 'cancelled' }], { 'if-match': now.etag! });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: 'cancelled', comment: 'Patient asked for a ground-floor room' });
  });

  it('blocks a free Slot and opens it again: the search and a booking follow', async () => {
    const { base } = await startVendor();
    const slot = await freeSlot(base, MONDAY_9AM);
    await staffEdit(base, `Slot/${slot.id}`, [{ op: 'replace', path: '/status', value: 'busy-unavailable' }]);
    expect((await search(base, freeAt(MONDAY_9AM))).total).toBe(0);
    const patientId = await createPatient(base);
    expect((await call(base, 'POST', 'Appointment', booking(slot.id, patientId))).status).toBe(409);
    await staffEdit(base, `Slot/${slot.id}`, [{ op: 'replace', path: '/status', value: 'free' }]);
    expect((await call(base, 'POST', 'Appointment', booking(slot.id, patientId))).status).toBe(201);
  });

  it('makes a Slot outside the clinic hours with a PUT of the whole record (201), which can then be found and booked', async () => {
    const { base } = await startVendor();
    const sunday = '2026-03-08T14:00:00.000Z';
    const slot = {
      resourceType: 'Slot',
      id: 'sunday-clinic-1',
      schedule: { reference: 'Schedule/sch-3001' },
      status: 'free',
      start: sunday,
      end: '2026-03-08T14:15:00.000Z',
    };
    const made = await call(base, 'PUT', `_control/staff-edit/Slot/${slot.id}`, slot);
    expect(made.status).toBe(201);
    expect((await freeSlot(base, sunday)).id).toBe('sunday-clinic-1');
    const booked = await call(base, 'POST', 'Appointment', booking(slot.id, await createPatient(base)));
    expect(booked.body).toMatchObject({ start: sunday });
  });

  it('needs no If-Match and counts nothing as refused or as a change without If-Match', async () => {
    const { base } = await startVendor();
    await staffEdit(base, 'Practitioner/pr-1001', [{ op: 'replace', path: '/active', value: false }]);
    expect((await call(base, 'GET', 'Practitioner/pr-1001')).body.active).toBe(false);
    expect(await (await fetch(`${base}/_control/counters`)).json()).toMatchObject({ withoutIfMatch: 0, refused: {} });
  });

  it.each([
    ['a record that does not exist', 'POST', 'Patient/nobody', [{ op: 'add', path: '/active', value: true }], 404, /does not exist/],
    ['a body that is not a patch', 'POST', 'Practitioner/pr-1001', { active: false }, 400, /non-empty array/],
    ['a whole record of another id', 'PUT', 'Slot/a', { resourceType: 'Slot', id: 'b' }, 400, /with this resourceType and id/],
  ])('refuses %s, saying why', async (_what, method, path, body, status, reason) => {
    const { base } = await startVendor();
    const answer = await call(base, method, `_control/staff-edit/${path}`, body, { 'content-type': 'application/json' });
    expect(answer.status).toBe(status);
    expect(why(answer)).toMatch(reason);
  });

  it('lists the control routes for any other path', async () => {
    const { base } = await startVendor();
    const answer = await call<{ error: string }>(base, 'GET', '_control/staff-edit/Patient/1');
    expect(answer.status).toBe(404);
    expect(answer.body.error).toMatch(/GET \/_control\/counters, POST \/_control\/staff-edit/);
  });
});
