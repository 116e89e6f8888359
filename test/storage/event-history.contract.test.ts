// An event's state history, on every engine: received (its inbox row's time, from intake on), each outcome
// of a batch with its attempt and reason written by the batch's commit, replays and dismissals with the change
// they record, the FHIR references an applied event wrote, and the history pruned with its event.
import { afterEach, describe, expect, it } from 'vitest';
import type { EventOutcome } from '../../src/storage/processing.ts';
import { appointmentEvent } from '../support/processor-fixture.ts';
import { engines, type OpenedEngine } from './processor-engines.ts';

const LEASE = 30_000;
const DAY = 24 * 60 * 60 * 1000;

describe.each(engines)('event history on $name', (engine) => {
  let e: OpenedEngine;
  afterEach(async () => {
    await e?.close();
  });
  const historyOf = async (eventId: string) => (await e.stores.events.get(eventId))?.history;
  /** Stores one event per serviceId, takes them in and claims them. */
  const claimed = async (...serviceIds: string[]) => {
    const stored = [];
    for (const s of serviceIds) stored.push(await e.store(appointmentEvent({ serviceId: s })));
    await e.stores.queue.intake();
    await e.stores.queue.claim(100, LEASE);
    return stored;
  };

  it('starts at intake: received at its received time, and a body that is not an event received then dead', async () => {
    e = await engine.open();
    const receivedAt = e.clock.now();
    const good = await e.store(appointmentEvent({ serviceId: 'apt_1' }));
    const bad = await e.store('not json', 'raw-1');
    e.clock.advance(5_000);
    await e.stores.queue.intake();
    expect(await historyOf(good.eventId)).toEqual([{ at: receivedAt, state: 'received', attempt: 0, reason: null }]);
    expect(await historyOf(bad.eventId)).toEqual([
      { at: receivedAt, state: 'received', attempt: 0, reason: null },
      { at: receivedAt + 5_000, state: 'dead', attempt: 0, reason: expect.stringMatching(/^malformed_json/) },
    ]);
  });

  it('writes each outcome of a batch in its commit, with the attempt it ended and its reason, and none for a hand-back', async () => {
    e = await engine.open();
    const [applied, retry, wait, stale, dead, release] = await claimed('apt_1', 'apt_2', 'apt_3', 'apt_4', 'apt_5', 'apt_6');
    e.clock.advance(1_000);
    const at = e.clock.now();
    const outcomes: EventOutcome[] = [
      { kind: 'applied', inboxId: applied!.inboxId, versions: [], claims: [], emrRefs: ['Patient/p1', 'Appointment/a1'] },
      { kind: 'retry', inboxId: retry!.inboxId, at: at + 5_000, reason: 'emr_unavailable: down' },
      { kind: 'wait', inboxId: wait!.inboxId, at: at + 5_000, reason: 'emr_unauthorized: refused' },
      { kind: 'discarded_stale', inboxId: stale!.inboxId, reason: 'stale: older' },
      { kind: 'dead', inboxId: dead!.inboxId, reason: 'invalid_event: x' },
      { kind: 'release', inboxId: release!.inboxId },
    ];
    await e.stores.queue.commit(outcomes);
    const last = async (eventId: string) => (await historyOf(eventId))!.slice(1);
    expect(await last(applied!.eventId)).toEqual([{ at, state: 'applied', attempt: 1, reason: null }]);
    expect(await last(retry!.eventId)).toEqual([{ at, state: 'retrying', attempt: 1, reason: 'emr_unavailable: down' }]);
    // The attempt was given back (the EMR refused the adapter), yet the history names the attempt it ended.
    expect(await last(wait!.eventId)).toEqual([{ at, state: 'waiting', attempt: 1, reason: 'emr_unauthorized: refused' }]);
    expect(await last(stale!.eventId)).toEqual([{ at, state: 'discarded_stale', attempt: 1, reason: 'stale: older' }]);
    expect(await last(dead!.eventId)).toEqual([{ at, state: 'dead', attempt: 1, reason: 'invalid_event: x' }]);
    expect(await last(release!.eventId)).toEqual([]);
    expect((await e.stores.events.get(applied!.eventId))!.emrRefs).toEqual(['Patient/p1', 'Appointment/a1']);
    expect((await e.stores.events.get(dead!.eventId))!.emrRefs).toEqual([]);

    // The retried event's second attempt, its claim counted: attempt 2.
    e.clock.advance(5_000);
    const [again] = await e.stores.queue.claim(10, LEASE);
    await e.stores.queue.commit([{ kind: 'applied', inboxId: again!.inboxId, versions: [], claims: [] }]);
    expect((await historyOf(retry!.eventId))!.map((h) => [h.state, h.attempt])).toEqual([
      ['received', 0],
      ['retrying', 1],
      ['applied', 2],
    ]);
  });

  it('writes nothing when the commit fails: the history never says what the state does not', async () => {
    e = await engine.open();
    const [a] = await claimed('apt_1');
    const broken = {
      kind: 'applied',
      inboxId: a!.inboxId,
      versions: [{ entityKey: null, version: null, eventId: null }],
      claims: [],
    } as unknown as EventOutcome;
    await expect(e.stores.queue.commit([broken])).rejects.toThrow();
    expect((await historyOf(a!.eventId))!.map((h) => h.state)).toEqual(['received']);
  });

  it('records a replay and a dismissal with the change, and nothing for an event that was not dead', async () => {
    e = await engine.open();
    const [a, b, ok] = await claimed('apt_1', 'apt_2', 'apt_3');
    await e.stores.queue.commit([
      { kind: 'dead', inboxId: a!.inboxId, reason: 'emr_unavailable: down' },
      { kind: 'dead', inboxId: b!.inboxId, reason: 'emr_unavailable: down' },
      { kind: 'applied', inboxId: ok!.inboxId, versions: [], claims: [] },
    ]);
    e.clock.advance(1_000);
    expect(await e.stores.deadLetters.events.reopen(a!.eventId)).toBe(true);
    expect(await e.stores.deadLetters.events.reopen(ok!.eventId)).toBe(false);
    expect(await e.stores.deadLetters.events.dismiss(b!.eventId, 'test clinic data', 'night-desk')).toBe(true);
    expect(await e.stores.deadLetters.events.dismiss(b!.eventId, 'again', 'night-desk')).toBe(false);
    const now = e.clock.now();
    expect((await historyOf(a!.eventId))!.slice(2)).toEqual([{ at: now, state: 'replayed', attempt: 0, reason: null }]);
    expect((await historyOf(b!.eventId))!.slice(2)).toEqual([{ at: now, state: 'dismissed', attempt: 1, reason: 'test clinic data' }]);
    expect((await historyOf(ok!.eventId))!.map((h) => h.state)).toEqual(['received', 'applied']);

    // Replaying every dead letter of a type records each one it put back.
    const [c] = await claimed('apt_4');
    await e.stores.queue.commit([{ kind: 'dead', inboxId: c!.inboxId, reason: 'emr_unavailable: down' }]);
    expect(await e.stores.deadLetters.events.reopenAll('appointment.created')).toBe(1);
    expect((await historyOf(c!.eventId))!.map((h) => h.state)).toEqual(['received', 'dead', 'replayed']);
  });

  it('prunes the history with its event, and keeps the history of every event that stays', async () => {
    e = await engine.open();
    const [old, kept] = await claimed('apt_1', 'apt_2');
    await e.stores.queue.commit([
      { kind: 'applied', inboxId: old!.inboxId, versions: [], claims: [] },
      { kind: 'dead', inboxId: kept!.inboxId, reason: 'emr_unavailable: down' },
    ]);
    // SQLite always keeps the newest inbox row (its id would be reused): one more event arrives after.
    await e.store(appointmentEvent({ serviceId: 'apt_3' }));
    e.clock.advance(2 * DAY);
    expect((await e.stores.retention.pruneEvents({ bodiesBefore: e.clock.now() - DAY, eventsBefore: e.clock.now() - DAY })).events).toBe(1);
    const rows = await e.query<{ inbox_id: number }>('SELECT inbox_id FROM event_history ORDER BY id');
    expect(rows.map((r) => Number(r.inbox_id))).toEqual([kept!.inboxId]);
    expect(await e.stores.events.get(old!.eventId)).toBeUndefined();
  });
});
