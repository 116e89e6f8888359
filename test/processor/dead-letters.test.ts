// Dead letters: bodies that cannot be events, replay (one and bulk), retention that never touches them,
// and the admin routes over all of it. (Refused mappings: test/mappings/.)
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app/app.ts';
import { silentLogger } from '../../src/logger.ts';
import { createProcessorAdminRouter } from '../../src/processor/index.ts';
import { appointmentEvent, processorFixture } from '../support/processor-fixture.ts';

const DAY = 24 * 60 * 60 * 1000;

describe('dead letters', () => {
  it.each([
    ['a body that is not JSON', 'this is {not json', /^malformed_json/],
    ['an unknown event type', { eventId: 'e-unknown', eventType: 'invoice.created' }, /^unknown_event_type: invoice.created/],
    ['an event missing a required field', { ...appointmentEvent(), occurredAt: undefined }, /^invalid_event: occurredAt/],
  ])('parks %s with its reason, never drops it', async (_label, body, reason) => {
    const f = processorFixture();
    const id = f.store(body, typeof body === 'string' ? 'raw-1' : undefined);
    await f.processor.runOnce();
    expect(f.state(id)?.state).toBe('dead');
    expect(f.state(id)?.last_error).toMatch(reason);
  });

  it('parks a body whose eventId differs from the header it was filed under', async () => {
    const f = processorFixture();
    const id = f.store(appointmentEvent(), 'another-id');
    await f.processor.runOnce();
    expect(f.state(id)?.last_error).toMatch(/^event_id_mismatch/);
  });

  it('replays one dead letter back into its entity order, and all of them in bulk', async () => {
    const f = processorFixture({ PROCESSOR_MAX_ATTEMPTS: '1' });
    f.emr.down = true;
    const a = f.store(appointmentEvent({ serviceId: 'apt_A' }));
    const b = f.store(appointmentEvent({ serviceId: 'apt_B' }));
    await f.processor.runOnce();
    expect([f.state(a)?.state, f.state(b)?.state]).toEqual(['dead', 'dead']);
    f.emr.down = false;
    const app = createApp({
      logger: silentLogger(),
      metrics: f.metrics,
      routers: [],
      adminRouters: [createProcessorAdminRouter({ deadLetters: f.stores.deadLetters, logger: silentLogger() })],
      adminToken: 'admin-token-for-tests-0001',
      readiness: [],
    });
    const auth = { authorization: 'Bearer admin-token-for-tests-0001' };
    const listed = await request(app.callback()).get('/admin/dead-letters').set(auth);
    expect(listed.body.events.map((e: { eventId: string }) => e.eventId).sort()).toEqual([a, b].sort());
    expect(JSON.stringify(listed.body)).not.toMatch(/Test Patient/);
    expect((await request(app.callback()).get('/admin/dead-letters')).status).toBe(401);

    expect((await request(app.callback()).post(`/admin/dead-letters/${a}/replay`).set(auth)).status).toBe(200);
    expect((await request(app.callback()).post(`/admin/dead-letters/${a}/replay`).set(auth)).status).toBe(409);
    await f.processor.runOnce();
    expect(f.state(a)?.state).toBe('applied');
    expect((await request(app.callback()).get(`/admin/events/${a}`).set(auth)).body).toMatchObject({ eventId: a, state: 'applied' });

    const bulk = await request(app.callback()).post('/admin/dead-letters/replay').set(auth).send({ eventType: 'appointment.created' });
    expect(bulk.body.replayed.events).toBe(1);
    await f.processor.runOnce();
    expect(f.state(b)?.state).toBe('applied');
    expect((await request(app.callback()).get('/admin/events/nope').set(auth)).status).toBe(404);
  });
});

describe('retention', () => {
  it('prunes bodies, then eventIds, of finished events only', async () => {
    const f = processorFixture({ RETENTION_BODY_DAYS: '7', RETENTION_EVENT_ID_DAYS: '30', PROCESSOR_MAX_ATTEMPTS: '1' });
    const applied = f.store(appointmentEvent({ serviceId: 'apt_ok' }));
    await f.processor.runOnce();
    f.emr.down = true;
    const dead = f.store(appointmentEvent({ serviceId: 'apt_dead' }));
    await f.processor.runOnce();
    const body = (id: string) => f.db.prepare('SELECT body FROM inbox_events WHERE event_id = ?').pluck().get(id);

    f.clock.advance(8 * DAY);
    await f.processor.runOnce();
    expect(body(applied)).toBeNull();
    expect(body(dead)).not.toBeNull();

    f.clock.advance(23 * DAY);
    await f.processor.runOnce();
    expect(f.state(applied)).toBeUndefined();
    expect(f.db.prepare('SELECT count(*) FROM inbox_events WHERE event_id = ?').pluck().get(applied)).toBe(0);
    expect(f.state(dead)?.state).toBe('dead');
    expect(body(dead)).not.toBeNull();
  });

  it('never lets a pruned id be reused, so a new event after a quiet month is still taken in', async () => {
    const f = processorFixture({ RETENTION_EVENT_ID_DAYS: '7' });
    f.store(appointmentEvent({ serviceId: 'apt_old_1' }));
    f.store(appointmentEvent({ serviceId: 'apt_old_2' }));
    await f.processor.runOnce();
    f.clock.advance(40 * DAY);
    await f.processor.runOnce();
    expect(f.db.prepare('SELECT count(*) FROM inbox_events').pluck().get()).toBe(1);
    const fresh = f.store(appointmentEvent({ serviceId: 'apt_new' }));
    await f.processor.runOnce();
    expect(f.state(fresh)?.state).toBe('applied');
  });
});
