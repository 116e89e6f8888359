// The Slot search a client books by, over HTTP: `Slot?schedule.actor=Practitioner/{id}&start=eq{startsAt}&status=free`
// answered as a searchset Bundle whatever way the instant is written, the status filter following a booking, a
// clinic day and a range, paging, the refusals of what it does not take, and the other Slot searches left to the store.
import { describe, expect, it } from 'vitest';
import { book, call, search, slotsOf, startVendor, why } from './support.ts';

const ADAPTER_QUERY = 'Slot?schedule.actor=Practitioner/pr-1002&start=eq2026-03-09T12:00:00Z&status=free';

describe('vendor profile: the Slot search', () => {
  it("answers the adapter's query with the one free Slot of the practitioner's Schedule at that start, as a searchset Bundle", async () => {
    const { base } = await startVendor();
    const answer = await search(base, ADAPTER_QUERY);
    expect(answer.status).toBe(200);
    expect(answer).toMatchObject({ resourceType: 'Bundle', type: 'searchset', total: 1 });
    expect(answer.entry).toEqual([
      {
        resource: expect.objectContaining({ id: 'sch-3002-20260309T1200Z', status: 'free', schedule: { reference: 'Schedule/sch-3002' } }),
        search: { mode: 'match' },
      },
    ]);
  });

  it.each([
    ['with its offset', '2026-03-09T08:00:00-04:00'],
    ['with milliseconds', '2026-03-09T12:00:00.000Z'],
    ['to the minute', '2026-03-09T12:00Z'],
    ['with a + offset that reached the server as a space', '2026-03-09T13:00:00 01:00'],
  ])('finds the same Slot for the instant written %s', async (_how, instant) => {
    const { base } = await startVendor();
    const ids = (await slotsOf(base, `Slot?schedule.actor=Practitioner/pr-1002&start=eq${instant}&status=free`)).map((s) => s.id);
    expect(ids).toEqual(['sch-3002-20260309T1200Z']);
  });

  it('no longer finds a Slot as free once it is booked; status=busy and a list of statuses do', async () => {
    const { base } = await startVendor();
    const booked = await book(base, '2026-03-09T12:00:00Z', 'pr-1002');
    expect((await search(base, ADAPTER_QUERY)).total).toBe(0);
    expect((await slotsOf(base, ADAPTER_QUERY.replace('status=free', 'status=busy'))).map((s) => s.id)).toEqual([booked.slot.id]);
    expect((await slotsOf(base, ADAPTER_QUERY.replace('status=free', 'status=free,busy'))).map((s) => s.id)).toEqual([booked.slot.id]);
  });

  it('finds nothing outside the clinic hours, nor for a practitioner with no Schedule', async () => {
    const { base } = await startVendor();
    expect((await search(base, 'Slot?schedule.actor=Practitioner/pr-1002&start=eq2026-03-09T11:45:00Z&status=free')).total).toBe(0);
    expect((await search(base, 'Slot?schedule.actor=Practitioner/pr-9999&start=eq2026-03-09T12:00:00Z')).total).toBe(0);
  });

  it('takes the Schedule itself, a range of starts, and a clinic day for a date', async () => {
    const { base } = await startVendor();
    expect((await slotsOf(base, 'Slot?schedule=Schedule/sch-3003&start=2026-03-09T12:00:00Z')).map((s) => s.id)).toEqual(['sch-3003-20260309T1200Z']);
    const hour = await slotsOf(base, 'Slot?schedule.actor=Practitioner/pr-1003&start=ge2026-03-09T12:00:00Z&start=lt2026-03-09T13:00:00Z');
    expect(hour.map((s) => s.start.slice(11, 16))).toEqual(['12:00', '12:15', '12:30', '12:45']);
    expect((await search(base, 'Slot?schedule.actor=Practitioner/pr-1003&start=gt2026-04-04T21:30:00Z')).total).toBe(1);
    expect((await search(base, 'Slot?schedule.actor=Practitioner/pr-1003,Practitioner/pr-1004&start=eq2026-03-09')).total).toBe(80);
  });

  it('pages with _count and _offset, the next page linked on the same base', async () => {
    const { base } = await startVendor();
    const first = await search(base, 'Slot?schedule.actor=Practitioner/pr-1001&start=eq2026-03-09&_count=15');
    expect([first.total, first.entry?.length]).toEqual([40, 15]);
    const next = first.link?.find((l) => l.relation === 'next')?.url ?? '';
    expect(next.startsWith(`${base}/Slot?`)).toBe(true);
    const second = await search(base, next.slice(base.length + 1));
    expect(second.entry?.[0]?.resource.start).toBe('2026-03-09T15:45:00.000Z');
    const last = await search(base, 'Slot?schedule.actor=Practitioner/pr-1001&start=eq2026-03-09&_count=15&_offset=30');
    expect([last.entry?.length, last.link]).toEqual([10, undefined]);
  });

  it.each([
    ['a parameter it does not take', 'Slot?schedule.actor=Practitioner/pr-1001&service-type=x', /service-type is not supported/],
    ['a start that is no instant', 'Slot?schedule.actor=Practitioner/pr-1001&start=eqtomorrow', /start=eqtomorrow is not a date/],
    ['an instant without its offset', 'Slot?schedule.actor=Practitioner/pr-1001&start=eq2026-03-09T12:00:00', /with its offset/],
    ['a prefix it does not take', 'Slot?schedule.actor=Practitioner/pr-1001&start=ne2026-03-09T12:00:00Z', /not ne/],
    ['a _count of zero', 'Slot?schedule.actor=Practitioner/pr-1001&_count=0', /_count=0/],
  ])('refuses %s with 400 and an OperationOutcome saying why', async (_what, query, reason) => {
    const { base } = await startVendor();
    const answer = await call(base, 'GET', query);
    expect(answer.status).toBe(400);
    expect(answer.body.resourceType).toBe('OperationOutcome');
    expect(why(answer)).toMatch(reason);
  });

  it('leaves the other Slot searches to the store', async () => {
    const { base } = await startVendor();
    expect((await slotsOf(base, 'Slot?_id=sch-3001-20260309T1200Z')).map((s) => s.id)).toEqual(['sch-3001-20260309T1200Z']);
  });
});
