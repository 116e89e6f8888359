// The vendor profile's Slots over HTTP: made at start for each Schedule's clinic hours in the clinic's time zone
// (08:00 to 18:00 New York time, Monday to Saturday, on both sides of the change to daylight saving), from two days
// back to 30 ahead; made again when the clinic's day turns (the new day ahead, the free ones behind removed, booked
// ones kept); and a restart on the data file makes none twice and keeps every Slot as it was.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../../src/clock.ts';
import { book, call, FRIDAY_10AM, readSlot, search, slotsOf, startVendor, tempDir } from './support.ts';

const DAY = 24 * 3600_000;
const startsOf = async (base: string, query: string) => (await slotsOf(base, query)).map((s) => s.start);
const totalSlots = async (base: string) => (await search(base, 'Slot?_count=1')).total;

describe('vendor profile: Slots made ahead', () => {
  it('makes 15-minute Slots from 08:00 to 18:00 in New York time, EST before the clocks go forward and EDT after', async () => {
    const { base } = await startVendor();
    const friday = await startsOf(base, 'Slot?schedule.actor=Practitioner/pr-1001&start=eq2026-03-06');
    expect(friday).toHaveLength(40);
    expect([friday[0], friday[1], friday[39]]).toEqual(['2026-03-06T13:00:00.000Z', '2026-03-06T13:15:00.000Z', '2026-03-06T22:45:00.000Z']);
    expect((await startsOf(base, 'Slot?schedule.actor=Practitioner/pr-1001&start=eq2026-03-07'))[0]).toBe('2026-03-07T13:00:00.000Z');
    expect(await startsOf(base, 'Slot?schedule.actor=Practitioner/pr-1001&start=eq2026-03-08')).toEqual([]);
    const monday = await startsOf(base, 'Slot?schedule.actor=Practitioner/pr-1001&start=eq2026-03-09');
    expect([monday[0], monday[39], monday.length]).toEqual(['2026-03-09T12:00:00.000Z', '2026-03-09T21:45:00.000Z', 40]);
  });

  it('names each Slot by its Schedule and its start in UTC, free, 15 minutes long, under the Schedule of each practitioner', async () => {
    const { base } = await startVendor();
    expect(await readSlot(base, 'sch-3004-20260309T1200Z')).toMatchObject({
      resourceType: 'Slot',
      schedule: { reference: 'Schedule/sch-3004' },
      status: 'free',
      start: '2026-03-09T12:00:00.000Z',
      end: '2026-03-09T12:15:00.000Z',
    });
    const schedules = await search<{ id: string }>(base, 'Schedule?actor=Practitioner/pr-1004');
    expect(schedules.entry?.map((e) => e.resource.id)).toEqual(['sch-3004']);
  });

  it('covers two days back and 30 ahead of the clinic day: 28 working days of 40 Slots for each of the 4 practitioners', async () => {
    const { base } = await startVendor();
    expect(await startsOf(base, 'Slot?schedule.actor=Practitioner/pr-1001&start=eq2026-03-03')).toEqual([]);
    expect(await startsOf(base, 'Slot?schedule.actor=Practitioner/pr-1001&start=eq2026-03-04')).toHaveLength(40);
    expect(await startsOf(base, 'Slot?schedule.actor=Practitioner/pr-1001&start=eq2026-04-04')).toHaveLength(40);
    expect(await startsOf(base, 'Slot?schedule.actor=Practitioner/pr-1001&start=eq2026-04-06')).toEqual([]);
    expect(await totalSlots(base)).toBe(28 * 40 * 4);
  });

  it('makes the new day ahead when the clinic day turns and removes the free Slots behind, keeping a booked one', async () => {
    const vendor = await startVendor();
    const booked = await book(vendor.base, '2026-03-04T13:00:00Z');
    vendor.clock.advance(DAY);
    expect(await startsOf(vendor.base, 'Slot?schedule.actor=Practitioner/pr-1001&start=eq2026-04-06')).toHaveLength(40);
    expect((await call(vendor.base, 'GET', 'Slot/sch-3001-20260304T1315Z')).status).toBe(404);
    expect((await readSlot(vendor.base, booked.slot.id)).status).toBe('busy');
    expect(await totalSlots(vendor.base)).toBe(28 * 40 * 4 + 1);
  });

  it('does not turn the day before midnight in New York, though it is already the next day in UTC', async () => {
    const clock = createManualClock(Date.parse('2026-03-07T04:30:00Z')); // Friday 23:30 in New York
    const { base } = await startVendor({ clock });
    expect(await startsOf(base, 'Slot?schedule.actor=Practitioner/pr-1001&start=eq2026-03-04')).toHaveLength(40);
    expect(await startsOf(base, 'Slot?schedule.actor=Practitioner/pr-1001&start=eq2026-04-06')).toEqual([]);
  });
});

describe('vendor profile: Slots across a restart', () => {
  it('makes no Slot twice and keeps each as it was: a booked one busy, a free one at its version', async () => {
    const dataFile = join(tempDir(), 'vendor.jsonl');
    const clock = createManualClock(FRIDAY_10AM);
    const first = await startVendor({ dataFile, clock });
    const booked = await book(first.base, '2026-03-09T13:00:00Z');
    const free = await readSlot(first.base, 'sch-3002-20260309T1300Z');
    await first.server.close();
    const second = await startVendor({ dataFile, clock });
    expect(await totalSlots(second.base)).toBe(28 * 40 * 4);
    expect((await readSlot(second.base, booked.slot.id)).status).toBe('busy');
    expect((await readSlot(second.base, free.id)).meta.versionId).toBe(free.meta.versionId);
    expect(await startsOf(second.base, 'Slot?schedule.actor=Practitioner/pr-1001&start=eq2026-03-09T13:00:00Z&status=free')).toEqual([]);
  });

  it('makes the days that came meanwhile when it starts on a later day', async () => {
    const dataFile = join(tempDir(), 'vendor.jsonl');
    const first = await startVendor({ dataFile });
    await first.server.close();
    const second = await startVendor({ dataFile, clock: createManualClock(FRIDAY_10AM + 3 * DAY) });
    expect(await startsOf(second.base, 'Slot?schedule.actor=Practitioner/pr-1001&start=eq2026-04-08')).toHaveLength(40);
    expect(await startsOf(second.base, 'Slot?schedule.actor=Practitioner/pr-1001&start=eq2026-03-06')).toEqual([]);
    expect(await totalSlots(second.base)).toBe(28 * 40 * 4);
  });
});
