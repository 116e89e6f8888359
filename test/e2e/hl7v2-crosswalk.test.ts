// End to end beside an HL7 v2 EMR with the crosswalk: the real simulator, the bundled HL7 EMR over loopback MLLP and
// the real adapter. With HL7_REQUIRE_MAPPED=doctor an appointment whose doctor nobody mapped waits (no attempt used,
// no SIU sent) while its patient's ADT goes, and is booked within 5 s of the mapping with the EMR's id alone in
// AIP-3; without it, a doctor goes by the service's id until mapped, and by the EMR's id after. The mapping is made
// in the adapter's database from a connection of the test's own, as one made on another replica lands.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import { openDatabase } from '../../src/sqlite/open.ts';
import type { CrosswalkEntityType } from '../../src/storage/crosswalk.ts';
import { createSqliteCrosswalkStore } from '../../src/storage/sqlite/crosswalk.ts';
import { type Hl7Stack, startHl7Stack } from '../support/hl7-stack.ts';
import { waitFor } from '../support/wait.ts';

type Named = { serviceId: string; name: string };
type Snapshot = { serviceId: string; doctor: Named; location: Named; patient: Named };
type EventList = { events: { state: string; attempts: number; waitingFor?: { entityType: string; serviceId: string } }[] };

let s: Hl7Stack | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

/** Maps a record in the adapter's crosswalk, committed through a connection of the test's own. */
async function mapInCrosswalk(stack: Hl7Stack, entityType: CrosswalkEntityType, serviceId: string, emrId: string): Promise<void> {
  const db = openDatabase({ path: join(stack.dir, 'emr-bridge.db'), migrationsDir: ADAPTER_MIGRATIONS, migrate: false, checkpoints: false });
  try {
    await createSqliteCrosswalkStore(db, systemClock).set({ entityType, serviceId }, emrId, 'operator', { post: true });
  } finally {
    db.close();
  }
}

const bookedIn = (stack: Hl7Stack, serviceId: string, ok: (a: ReturnType<Hl7Stack['emr']['appointments']>[number]) => boolean = () => true) =>
  stack.emr.appointments().find((a) => a.serviceId === serviceId && ok(a));

/** AIP-3 naming a doctor by the EMR's id alone: that id, then the family and given names, and no assigning authority. */
const byEmrId = (emrId: string) => new RegExp(`^${emrId}(\\^[^^]*){1,2}$`);

describe('an adapter beside an HL7 v2 EMR, with the crosswalk', () => {
  it('holds an appointment (HL7_REQUIRE_MAPPED=doctor) while its patient registers, and books it within 5 s of the mapping by the EMR’s id', async () => {
    s = await startHl7Stack({ settings: { HL7_REQUIRE_MAPPED: 'doctor' } });
    const stack = s;
    const patient = (await stack.simPost<Named>('/_sim/patients', { clinicId: stack.clinicId })).body;
    const created = (await stack.simPost<Snapshot>('/_sim/appointments', { clinicId: stack.clinicId, patient: { serviceId: patient.serviceId } })).body;

    const waiting = await waitFor(async () => {
      const list = (await stack.admin<EventList>('GET', '/events?state=waiting')).body.events;
      return list.length === 1 ? list[0] : undefined;
    }, 10_000);
    expect(waiting).toMatchObject({ attempts: 0, waitingFor: { entityType: 'doctor', serviceId: created.doctor.serviceId } });
    await waitFor(() => stack.emr.patients().find((p) => p.serviceId === patient.serviceId), 10_000);
    expect(stack.emr.received().map((m) => m.type)).not.toContain('SIU^S12');

    const mappedAt = Date.now();
    await mapInCrosswalk(stack, 'doctor', created.doctor.serviceId, 'DR-1001');
    const booked = await waitFor(() => bookedIn(stack, created.serviceId), 5_000);

    expect(Date.now() - mappedAt).toBeLessThan(5_000);
    expect(booked.doctor).toMatch(byEmrId('DR-1001'));
    expect(booked.location).toBe(`${created.location.serviceId}^^^^^^^^${created.location.name}^^SERVICE`);
    expect((await stack.admin<EventList>('GET', '/events?state=waiting')).body.events).toEqual([]);
  }, 40_000);

  it('names a doctor nobody mapped by the service’s id, and by the EMR’s id in the messages after the mapping', async () => {
    s = await startHl7Stack();
    const stack = s;
    const created = (await stack.simPost<Snapshot>('/_sim/appointments', { clinicId: stack.clinicId })).body;
    const booked = await waitFor(() => bookedIn(stack, created.serviceId), 15_000);
    expect(booked.doctor?.split('^').at(0)).toBe(created.doctor.serviceId);
    expect(booked.doctor?.split('^').at(-1)).toBe('SERVICE');

    await mapInCrosswalk(stack, 'doctor', created.doctor.serviceId, 'DR-2002');
    await stack.simPost(`/_sim/appointments/${created.serviceId}/reschedule`, { startsAt: '2027-05-05T09:30:00.000Z' });

    const moved = await waitFor(() => bookedIn(stack, created.serviceId, (a) => a.start.startsWith('20270505')), 15_000);
    expect(moved.doctor).toMatch(byEmrId('DR-2002'));
  }, 40_000);
});
