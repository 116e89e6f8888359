// An EMR that refuses the adapter itself (an incident) makes events wait: no attempt is spent, nothing is
// dead-lettered however long it lasts, the EMR is not hammered, and the events apply once it passes.
import { describe, expect, it } from 'vitest';
import { EmrError } from '../../src/emr/errors.ts';
import { appointmentEvent, processorFixture } from '../support/processor-fixture.ts';

const refused = () => new EmrError('emr_unauthorized', "the EMR's authorization server refused the client (invalid_client)", 401);

describe('processor during an EMR incident', () => {
  it('spends no attempt and parks nothing while the EMR refuses the adapter, then applies everything in order', async () => {
    const f = processorFixture({ PROCESSOR_MAX_ATTEMPTS: '3' });
    const first = f.store(appointmentEvent({ occurredAt: '2026-01-15T09:00:00.000Z' }));
    const second = f.store(
      appointmentEvent({ eventType: 'appointment.rescheduled', occurredAt: '2026-01-15T09:05:00.000Z', startsAt: '2026-01-20T10:00:00.000Z' }),
    );
    const other = f.store(appointmentEvent({ serviceId: 'apt_2' }));
    f.emr.failWith = refused();

    // Far more passes than the attempt budget, each after the gate's wait: an outage would have parked them.
    for (let i = 0; i < 12; i++) {
      await f.processor.runOnce();
      f.clock.advance(61_000);
    }
    for (const id of [first, second, other]) {
      expect(f.state(id)?.state).not.toBe('dead');
      expect(f.state(id)?.attempts).toBe(0);
    }
    expect(f.state(first)?.last_error).toContain('emr_unauthorized');

    f.emr.failWith = undefined;
    f.clock.advance(61_000);
    await f.processor.runOnce();
    expect([f.state(first)?.state, f.state(second)?.state, f.state(other)?.state]).toEqual(['applied', 'applied', 'applied']);
    expect(f.emr.appointments().find((a) => a.serviceId === 'apt_1')?.startsAt).toBe('2026-01-20T10:00:00.000Z');
    expect(f.logLines().filter((l) => l.alert === true && l.msg === 'event parked as a dead letter')).toHaveLength(0);
  });

  it('tries no event while the incident gate is closed, so a refusing EMR is probed, not hammered', async () => {
    const f = processorFixture();
    for (let i = 0; i < 10; i++) f.store(appointmentEvent({ serviceId: `apt_${i}` }));
    f.emr.failWith = refused();
    await f.processor.runOnce();
    const callsAfterFirstPass = f.emr.calls;
    // Within the first pause (at most one second), passes touch the EMR no more.
    f.clock.advance(400);
    await f.processor.runOnce();
    await f.processor.runOnce();
    expect(f.emr.calls).toBe(callsAfterFirstPass);
    f.clock.advance(1_000);
    await f.processor.runOnce();
    expect(f.emr.calls).toBeGreaterThan(callsAfterFirstPass);
  });

  it('still spends attempts on an outage and parks the event when they run out', async () => {
    const f = processorFixture({ PROCESSOR_MAX_ATTEMPTS: '2' });
    const id = f.store(appointmentEvent());
    f.emr.down = true;
    for (let i = 0; i < 4; i++) {
      await f.processor.runOnce();
      f.clock.advance(10_000);
    }
    expect(f.state(id)?.state).toBe('dead');
  });
});
