// The mapping outbox, driven by the processor's passes: each new mapping is posted to the service until it
// succeeds, never sooner than the service's Retry-After; a refusal (409 mapping_conflict) parks it as dead with
// one alert; the mappings the service took are pruned after RETENTION_EVENT_ID_DAYS, pending and dead ones never.
import { describe, expect, it } from 'vitest';
import { classifyStatus, ServiceCallError } from '../../src/service-client/errors.ts';
import { parseRetryAfter } from '../../src/work/retry-after.ts';
import { appointmentEvent, processorFixture } from '../support/processor-fixture.ts';

const DAY = 24 * 60 * 60 * 1000;

describe('the mapping outbox', () => {
  it('parks a refused mapping (409 mapping_conflict) with one alert, and retries one that can pass', async () => {
    const f = processorFixture();
    f.failMappings(new ServiceCallError({ code: 'service_unreachable', message: 'down', retryable: true }));
    f.store(appointmentEvent());
    await f.processor.runOnce();
    expect(f.mappingsPut).toEqual([]);
    f.failMappings(new ServiceCallError({ code: 'mapping_conflict', message: 'mapped elsewhere', retryable: false }, 409));
    f.clock.advance(60_000);
    await f.processor.runOnce();
    const dead = f.db.prepare("SELECT count(*) FROM mapping_outbox WHERE state = 'dead'").pluck().get();
    expect(dead).toBe(4);
    expect(f.logLines().filter((l) => l.alert === true)).toHaveLength(4);
  });

  it('posts a mapping again no sooner than the Retry-After of a 429, however short its backoff', async () => {
    const f = processorFixture();
    const body = { error: { code: 'rate_limited', message: 'slow down' } };
    f.failMappings(classifyStatus(429, body, parseRetryAfter('120', f.clock.now())));
    f.store(appointmentEvent());
    await f.processor.runOnce();
    f.failMappings(undefined);
    const due = f.db.prepare("SELECT min(next_attempt_at) FROM mapping_outbox WHERE state = 'pending'").pluck().get();
    expect(due).toBeGreaterThanOrEqual(f.clock.now() + 120_000);
    f.clock.advance(119_999);
    await f.processor.runOnce();
    expect(f.mappingsPut).toEqual([]);
    f.clock.advance(1);
    await f.processor.runOnce();
    expect(f.mappingsPut).toHaveLength(4);
  });
});

describe('mapping retention', () => {
  it('prunes mappings the service took once past the retention, never pending or dead ones', async () => {
    const f = processorFixture({ RETENTION_EVENT_ID_DAYS: '30' });
    const states = () =>
      Object.fromEntries(
        (f.db.prepare('SELECT entity_type, service_id, state FROM mapping_outbox').all() as { entity_type: string; service_id: string; state: string }[]).map(
          (r) => [`${r.entity_type}:${r.service_id}`, r.state],
        ),
      );
    f.store(appointmentEvent({ serviceId: 'apt_sent' }));
    await f.processor.runOnce();
    f.failMappings(new ServiceCallError({ code: 'mapping_conflict', message: 'mapped elsewhere', retryable: false }, 409));
    f.store(appointmentEvent({ serviceId: 'apt_dead' }));
    await f.processor.runOnce();
    f.failMappings(new ServiceCallError({ code: 'service_unreachable', message: 'down', retryable: true }));
    f.store(appointmentEvent({ serviceId: 'apt_pending' }));
    await f.processor.runOnce();
    expect(states()).toMatchObject({ 'appointment:apt_sent': 'sent', 'appointment:apt_dead': 'dead', 'appointment:apt_pending': 'pending' });

    f.clock.advance(31 * DAY);
    await f.processor.runOnce();

    const after = states();
    expect(Object.values(after)).not.toContain('sent');
    expect(after).toMatchObject({
      'appointment:apt_dead': 'dead',
      'patient:pat_apt_dead': 'dead',
      'appointment:apt_pending': 'pending',
      'patient:pat_apt_pending': 'pending',
    });
  });

  it('keeps a sent mapping until the retention has passed', async () => {
    const f = processorFixture({ RETENTION_EVENT_ID_DAYS: '30' });
    f.store(appointmentEvent({ serviceId: 'apt_1' }));
    await f.processor.runOnce();
    f.clock.advance(29 * DAY);
    await f.processor.runOnce();
    expect(f.db.prepare("SELECT count(*) FROM mapping_outbox WHERE state = 'sent'").pluck().get()).toBe(4);
  });
});
