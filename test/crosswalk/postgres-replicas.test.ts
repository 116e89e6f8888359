// The crosswalk on PostgreSQL with two replicas sharing one database: a mapping set through one replica's admin API
// takes up, within 5 s, the appointment waiting on the other (its NOTIFY wakes that replica: the poll is a minute);
// and a mapping committed while an event's waiting outcome is being committed never leaves the event waiting (the
// outcome sees the mapping, or the mapping sees the outcome's waits), with the clock still, so no backstop pass helps.
import { afterEach, describe, expect, it } from 'vitest';
import type { EventOutcome } from '../../src/storage/processing.ts';
import { appointmentEvent } from '../support/processor-fixture.ts';
import { type CrosswalkReplicas, crosswalkReplicas } from '../support/crosswalk-replicas.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `done` holds or `ms` pass; returns how long it took, or undefined when it never held. */
async function within(ms: number, done: () => Promise<boolean>): Promise<number | undefined> {
  const start = performance.now();
  while (performance.now() - start < ms) {
    if (await done()) return performance.now() - start;
    await sleep(20);
  }
  return undefined;
}

/** The clinic's location mapped, so a test is about its doctors alone. */
async function locationMapped(r: CrosswalkReplicas): Promise<void> {
  const location = r.emr.addMasterRecord({ entityType: 'location', name: 'Test Clinic Room 1' });
  await r.a.stores.crosswalk.set({ entityType: 'location', serviceId: 'loc_1' }, location, 'operator', { post: true });
}

describe('two replicas on one PostgreSQL database', () => {
  let r: CrosswalkReplicas | undefined;
  afterEach(async () => {
    await r?.close();
    r = undefined;
  });

  it("apply, within 5 s, an appointment waiting on replica A once its doctor is mapped through replica B's admin API", async () => {
    r = await crosswalkReplicas();
    await locationMapped(r);
    const doctor = r.emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Test Doctor' });
    const eventId = await r.store(appointmentEvent());
    const processorA = r.a.processor();
    processorA.start();
    const replicas = r;
    expect(await within(5_000, async () => (await replicas.state(eventId))?.state === 'waiting')).toBeDefined();

    await r.b.admin('put', '/crosswalk/doctor/doc_1').send({ emrId: doctor }).expect(200);
    const tookMs = await within(5_000, async () => (await replicas.state(eventId))?.state === 'applied');

    expect(tookMs, 'applied on replica A within 5 s of the mapping').toBeDefined();
    expect(await r.state(eventId)).toEqual({ state: 'applied', attempts: 1 });
    expect(r.emr.appointments()).toEqual([expect.objectContaining({ practitionerId: doctor })]);
    expect(r.emr.records.practitioner.size).toBe(0);
  }, 30_000);

  it('never leave an event waiting when its mapping commits while its waiting outcome is being committed', async () => {
    r = await crosswalkReplicas();
    await locationMapped(r);
    const { a, b } = r;
    // Replica A commits each waiting outcome while replica B maps the doctor it lacks, one or the other given a head
    // start of 0 to 10 ms in turn: from the mapping done first, through the two in flight together, to the outcome first.
    const HEAD_STARTS = [0, 1, 2, 4, 10];
    let round = 0;
    const woken: number[] = [];
    const commit = a.stores.queue.commit.bind(a.stores.queue);
    a.stores.queue.commit = async (outcomes: EventOutcome[], next) => {
      const waiting = outcomes.find((o): o is Extract<EventOutcome, { kind: 'waiting' }> => o.kind === 'waiting');
      if (!waiting) return commit(outcomes, next);
      const [lacked] = waiting.lacks;
      const emrId = r!.emr.addMasterRecord({ entityType: 'doctor', name: `Dr ${lacked!.serviceId}` });
      const headStart = HEAD_STARTS[(round >> 1) % HEAD_STARTS.length]!;
      const [commitAfter, mapAfter] = round % 2 ? [headStart, 0] : [0, headStart];
      const [claimed, set] = await Promise.all([
        sleep(commitAfter).then(() => commit(outcomes, next)),
        sleep(mapAfter).then(() => b.stores.crosswalk.set(lacked!, emrId, 'operator', { post: true })),
      ]);
      woken.push(set.woken);
      return claimed;
    };
    const processor = a.processor();

    for (; round < 2 * HEAD_STARTS.length * 2; round++) {
      const event = appointmentEvent({ serviceId: `apt_${round}` });
      event.doctor = { ...(event.doctor as object), serviceId: `doc_${round}` };
      const eventId = await r.store(event);
      await processor.runOnce();
      expect((await r.state(eventId))?.state, `round ${round}`).not.toBe('waiting');
      await processor.runOnce();
      expect(await r.state(eventId), `round ${round}`).toEqual({ state: 'applied', attempts: 1 });
    }
    // Each order was met: the mapping first (the outcome found it: nothing to wake), and the outcome first (woken).
    expect(new Set(woken)).toEqual(new Set([0, 1]));
  }, 60_000);
});
