// The dead-letter admin API beyond replay: dismissing an event or a mapping (kept with who, why and when,
// no longer listed, never replayed, never pruned), replaying one refused mapping, and the list's pages and
// filters with every bad value refused by name.
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app/app.ts';
import { silentLogger } from '../../src/logger.ts';
import { createProcessorAdminRouter } from '../../src/processor/index.ts';
import { ServiceCallError } from '../../src/service-client/errors.ts';
import { appointmentEvent, processorFixture, type ProcessorFixture } from '../support/processor-fixture.ts';

const DAY = 24 * 60 * 60 * 1000;
const TOKEN = 'admin-token-for-tests-0001';

function adminOf(f: ProcessorFixture) {
  const app = createApp({
    logger: silentLogger(),
    metrics: f.metrics,
    routers: [],
    adminRouters: [createProcessorAdminRouter({ deadLetters: f.stores.deadLetters, logger: silentLogger() })],
    adminToken: TOKEN,
    readiness: [],
  });
  const auth = { authorization: `Bearer ${TOKEN}` };
  return {
    get: (path: string) => request(app.callback()).get(`/admin${path}`).set(auth),
    post: (path: string, body?: unknown) =>
      request(app.callback())
        .post(`/admin${path}`)
        .set(auth)
        .send(body as object),
  };
}

/** A dead letter of the given type, at once: its body misses a required field. */
function storeDead(f: ProcessorFixture, eventId: string, eventType = 'appointment.created'): string {
  return f.store({ eventId, eventType, occurredAt: '2026-01-15T09:00:00.000Z' });
}

const ids = (events: { eventId: string }[]) => events.map((e) => e.eventId);

describe('dismissing a dead letter', () => {
  it('keeps it with the reason, who and when, and lists it only under state=dismissed', async () => {
    const f = processorFixture();
    storeDead(f, 'ev-keep');
    storeDead(f, 'ev-drop');
    await f.processor.runOnce();
    const admin = adminOf(f);

    const res = await admin.post('/dead-letters/ev-drop/dismiss', { reason: 'test clinic data, not real' });
    expect(res.status).toBe(200);
    expect(res.body.dismissed).toMatchObject({
      eventId: 'ev-drop',
      state: 'dismissed',
      dismissal: { reason: 'test clinic data, not real', by: 'admin', at: new Date(f.clock.now()).toISOString() },
    });
    expect(f.state('ev-drop')?.state).toBe('dismissed');
    expect(ids((await admin.get('/dead-letters')).body.events)).toEqual(['ev-keep']);
    expect(ids((await admin.get('/dead-letters?state=dismissed')).body.events)).toEqual(['ev-drop']);
    expect(f.logLines().some((l) => JSON.stringify(l).includes('not real'))).toBe(false);
  });

  it('refuses to replay a dismissed event, one at a time or in bulk, and to dismiss it twice', async () => {
    const f = processorFixture();
    storeDead(f, 'ev-1');
    await f.processor.runOnce();
    const admin = adminOf(f);
    await admin.post('/dead-letters/ev-1/dismiss', { reason: 'duplicate of ev-0' });

    const replay = await admin.post('/dead-letters/ev-1/replay');
    expect(replay.status).toBe(409);
    expect(replay.body.error).toMatchObject({ code: 'not_dead_letter', message: expect.stringContaining('dismissed') });
    expect((await admin.post('/dead-letters/replay', {})).body.replayed).toEqual({ events: 0, mappings: 0 });
    expect((await admin.post('/dead-letters/ev-1/dismiss', { reason: 'again' })).status).toBe(409);
    expect(f.state('ev-1')?.state).toBe('dismissed');
  });

  it('answers 404 for an unknown event and 409 for one that is not a dead letter', async () => {
    const f = processorFixture();
    const applied = f.store(appointmentEvent());
    await f.processor.runOnce();
    const admin = adminOf(f);
    expect((await admin.post('/dead-letters/nope/dismiss', { reason: 'x' })).status).toBe(404);
    expect((await admin.post(`/dead-letters/${applied}/dismiss`, { reason: 'x' })).status).toBe(409);
    expect(f.state(applied)?.state).toBe('applied');
  });

  it.each([
    ['no reason', {}, 'reason'],
    ['an empty reason', { reason: '   ' }, 'reason'],
    ['a reason over 500 characters', { reason: 'x'.repeat(501) }, 'reason'],
    ['an unknown key', { reason: 'ok', note: 'extra' }, 'note'],
  ])('refuses a dismissal with %s, naming the field', async (_label, body, field) => {
    const f = processorFixture();
    storeDead(f, 'ev-1');
    await f.processor.runOnce();
    const res = await adminOf(f).post('/dead-letters/ev-1/dismiss', body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request' });
    expect(res.body.error.message).toContain(field);
    expect(f.state('ev-1')?.state).toBe('dead');
  });

  it("never prunes a dismissed dead letter's row; its body goes RETENTION_BODY_DAYS after the dismissal", async () => {
    const f = processorFixture({ RETENTION_EVENT_ID_DAYS: '7', RETENTION_BODY_DAYS: '1' });
    storeDead(f, 'ev-1');
    await f.processor.runOnce();
    await adminOf(f).post('/dead-letters/ev-1/dismiss', { reason: 'known bad sample' });
    f.store(appointmentEvent({ serviceId: 'apt_later' }));
    f.clock.advance(60 * DAY);
    await f.processor.runOnce();
    expect(f.state('ev-1')?.state).toBe('dismissed');
    expect(f.db.prepare("SELECT body IS NOT NULL FROM inbox_events WHERE event_id = 'ev-1'").pluck().get()).toBe(0);
  });

  it('dismisses a mapping the service refused: no longer listed, not reopened by a bulk replay', async () => {
    const f = processorFixture();
    f.failMappings(new ServiceCallError({ code: 'mapping_conflict', message: 'mapped elsewhere', retryable: false }, 409));
    f.store(appointmentEvent({ serviceId: 'apt_A' }));
    await f.processor.runOnce();
    const admin = adminOf(f);
    expect((await admin.get('/dead-letters')).body.mappings).toHaveLength(4);

    const res = await admin.post('/dead-letters/mappings/appointment/apt_A/dismiss', { reason: 'mapped by hand at the service' });
    expect(res.status).toBe(200);
    expect(res.body.dismissed).toMatchObject({ entityType: 'appointment', serviceId: 'apt_A', dismissal: { by: 'admin' } });
    expect((await admin.get('/dead-letters')).body.mappings.map((m: { entityType: string }) => m.entityType).sort()).toEqual(['doctor', 'location', 'patient']);
    expect((await admin.get('/dead-letters?state=dismissed')).body.mappings).toMatchObject([{ entityType: 'appointment', serviceId: 'apt_A' }]);
    expect((await admin.post('/dead-letters/replay', {})).body.replayed.mappings).toBe(3);
    expect(f.db.prepare("SELECT state FROM mapping_outbox WHERE entity_type = 'appointment'").pluck().get()).toBe('dismissed');
    expect((await admin.post('/dead-letters/mappings/appointment/apt_A/dismiss', { reason: 'again' })).status).toBe(409);
    expect((await admin.post('/dead-letters/mappings/appointment/nope/dismiss', { reason: 'x' })).status).toBe(404);
  });
});

describe('replaying one refused mapping', () => {
  it('posts it again with fresh attempts once the service takes it; a dismissed or unknown one is refused', async () => {
    const f = processorFixture();
    f.failMappings(new ServiceCallError({ code: 'not_found', message: 'no patient pat_apt_A', retryable: false }, 404));
    f.store(appointmentEvent({ serviceId: 'apt_A' }));
    await f.processor.runOnce();
    const admin = adminOf(f);
    expect(await f.stores.deadLetters.mappings.deadCount()).toBe(4);
    expect((await admin.post('/dead-letters/mappings/patient/pat_apt_A/replay')).status).toBe(200);
    expect(await f.stores.deadLetters.mappings.deadCount()).toBe(3);
    // The service knows the patient now.
    f.failMappings(undefined);
    await f.processor.runOnce();
    expect(f.mappingsPut).toEqual([{ entityType: 'patient', serviceId: 'pat_apt_A', externalId: expect.any(String) }]);
    expect(f.db.prepare("SELECT state, attempts FROM mapping_outbox WHERE entity_type = 'patient'").get()).toEqual({ state: 'sent', attempts: 1 });
    expect((await admin.post('/dead-letters/mappings/patient/pat_apt_A/replay')).body.error.code).toBe('not_dead_letter');
    await admin.post('/dead-letters/mappings/doctor/doc_1/dismiss', { reason: 'mapped by hand' });
    expect((await admin.post('/dead-letters/mappings/doctor/doc_1/replay')).status).toBe(409);
    expect((await admin.post('/dead-letters/mappings/doctor/nope/replay')).status).toBe(404);
    expect(await f.stores.deadLetters.mappings.deadCount()).toBe(2);
  });
});

describe('listing dead letters', () => {
  it('pages through events, then mappings, each once, until nextCursor is null', async () => {
    const f = processorFixture();
    for (let i = 1; i <= 5; i++) storeDead(f, `ev-${i}`);
    f.failMappings(new ServiceCallError({ code: 'mapping_conflict', message: 'no', retryable: false }, 409));
    f.store(appointmentEvent({ serviceId: 'apt_A' }));
    await f.processor.runOnce();
    const admin = adminOf(f);

    const pages: { events: { eventId: string }[]; mappings: { entityType: string }[]; nextCursor: string | null }[] = [];
    let cursor: string | null = null;
    do {
      const res = await admin.get(`/dead-letters?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      pages.push(res.body);
      cursor = res.body.nextCursor;
    } while (cursor && pages.length < 10);

    expect(pages.map((p) => p.events.length + p.mappings.length)).toEqual([3, 3, 3]);
    expect(pages.flatMap((p) => ids(p.events))).toEqual(['ev-1', 'ev-2', 'ev-3', 'ev-4', 'ev-5']);
    expect(pages.flatMap((p) => p.mappings.map((m) => m.entityType))).toEqual(['appointment', 'doctor', 'location', 'patient']);
    expect(pages[2]!.nextCursor).toBeNull();
  });

  it('shows 100 by default and says when there is no next page', async () => {
    const f = processorFixture();
    for (let i = 1; i <= 101; i++) storeDead(f, `ev-${String(i).padStart(3, '0')}`);
    await f.processor.runOnce();
    await f.processor.runOnce();
    const admin = adminOf(f);
    const first = await admin.get('/dead-letters');
    expect(first.body.events).toHaveLength(100);
    const second = await admin.get(`/dead-letters?cursor=${first.body.nextCursor}`);
    expect(ids(second.body.events)).toEqual(['ev-101']);
    expect(second.body.nextCursor).toBeNull();
  });

  it('filters by event type and by received time, leaving mappings out of a type filter', async () => {
    const f = processorFixture();
    storeDead(f, 'ev-early', 'patient.updated');
    f.clock.advance(DAY);
    const middle = new Date(f.clock.now()).toISOString();
    storeDead(f, 'ev-mid', 'appointment.created');
    f.clock.advance(DAY);
    const late = new Date(f.clock.now()).toISOString();
    storeDead(f, 'ev-late', 'patient.updated');
    f.failMappings(new ServiceCallError({ code: 'mapping_conflict', message: 'no', retryable: false }, 409));
    f.store(appointmentEvent({ serviceId: 'apt_A' }));
    await f.processor.runOnce();
    const admin = adminOf(f);

    const byType = await admin.get('/dead-letters?type=patient.updated');
    expect(ids(byType.body.events)).toEqual(['ev-early', 'ev-late']);
    expect(byType.body.mappings).toEqual([]);
    expect(ids((await admin.get(`/dead-letters?since=${middle}&until=${late}`)).body.events)).toEqual(['ev-mid']);
    expect(ids((await admin.get(`/dead-letters?since=${late}&type=patient.updated`)).body.events)).toEqual(['ev-late']);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=501', 'limit'],
    ['limit=ten', 'limit'],
    ['cursor=not-a-cursor', 'cursor'],
    [`cursor=${Buffer.from('{"events":"x"}').toString('base64url')}`, 'cursor'],
    ['since=yesterday', 'since'],
    ['until=2026-01-15T10:00:00', 'until'],
    ['since=2026-01-16T00:00:00Z&until=2026-01-15T00:00:00Z', 'until'],
    ['state=gone', 'state'],
    ['type=a&type=b', 'type'],
    ['page=2', 'page'],
  ])('refuses %s naming %s', async (query, field) => {
    const res = await adminOf(processorFixture()).get(`/dead-letters?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request', field });
  });
});
