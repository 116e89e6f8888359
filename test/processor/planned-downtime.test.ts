// Planned EMR downtime on an injected clock, as the composition root wires it (src/runtime/adapter-parts.ts):
// EMR_DOWNTIME's window in America/New_York, the EMR port that makes no call during it, the dependency status
// and the gate the processor waits behind. Events received during the window are all applied after it, each
// entity's in order, with no attempt spent and no incident; one in flight as the window begins waits too; an
// EMR that comes back late is one probe at a time (an outage), not a burst of failures.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { parseConfig } from '../../src/config.ts';
import { createMemoryEmr } from '../../src/emr/memory/index.ts';
import type { EmrPort } from '../../src/emr/port.ts';
import { createMetrics } from '../../src/metrics/metrics.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import { createProcessor } from '../../src/processor/index.ts';
import { createEmrGate, withoutCallsDuringDowntime } from '../../src/runtime/emr-downtime.ts';
import { openDatabase } from '../../src/sqlite/open.ts';
import { createDependencyStatus, observed } from '../../src/status/dependency-status.ts';
import { createEmrDowntime, registerEmrDowntimeMetric } from '../../src/status/emr-downtime.ts';
import { createSqliteEmrDowntimeStore } from '../../src/storage/sqlite/emr-downtime.ts';
import { createSqliteInboxStore } from '../../src/storage/sqlite/inbox.ts';
import { createSqliteProcessorStores } from '../../src/storage/sqlite/processor-stores.ts';
import { captureLogger } from '../support/log-capture.ts';
import { appointmentEvent } from '../support/processor-fixture.ts';

// Sunday 2026-03-08, the day New York's clocks go forward at 07:00Z: 01:00 EST is 06:00Z, and the two hours of
// the window end at 08:00Z (04:00 EDT).
const WINDOW = '0 1 * * SUN@America/New_York/PT2H';
const STARTS = Date.parse('2026-03-08T06:00:00.000Z');
const ENDS = Date.parse('2026-03-08T08:00:00.000Z');
const MINUTE = 60_000;

async function downtimeProcessor() {
  const config = parseConfig({ PROCESSOR_MAX_ATTEMPTS: '3', PROCESSOR_BACKOFF_BASE_MS: '1000', PROCESSOR_BACKOFF_MAX_MS: '8000', EMR_DOWNTIME: WINDOW });
  const db = openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS });
  const clock = createManualClock(STARTS - 10 * MINUTE);
  const { logger, lines } = captureLogger();
  const metrics = createMetrics();
  const memory = createMemoryEmr();
  const downtime = createEmrDowntime({ clock, logger, windows: config.emrDowntime });
  await downtime.attachStore(createSqliteEmrDowntimeStore(db));
  registerEmrDowntimeMetric(metrics.registry, downtime);
  const status = createDependencyStatus({ clock, logger, downtime: (name) => (name === 'emr' ? downtime.current() : undefined) });
  // Each call looks the memory EMR's method up when made, so a test can replace one after wiring.
  const live = Object.fromEntries(
    Object.entries(memory).map(([k, v]) => [
      k,
      typeof v === 'function' ? (...a: unknown[]) => (memory as unknown as Record<string, (...x: unknown[]) => unknown>)[k]!(...a) : v,
    ]),
  ) as unknown as EmrPort;
  const emr = withoutCallsDuringDowntime(observed(live, 'emr', status), downtime);
  const gate = createEmrGate({ clock, emr, downtime, logger, resumed: () => undefined });
  const stores = createSqliteProcessorStores(db, clock);
  const mappingsPut: string[] = [];
  const processor = createProcessor({
    stores,
    clock,
    logger,
    emr,
    metrics,
    config,
    random: () => 0.5,
    emrGate: gate,
    serviceClient: {
      async putMapping(entityType, serviceId) {
        mappingsPut.push(`${entityType}:${serviceId}`);
      },
    },
    documentEvents: { apply: async () => undefined },
  });
  const inbox = createSqliteInboxStore(db);
  const state = db.prepare('SELECT p.state, p.attempts, p.next_attempt_at FROM processing p JOIN inbox_events e ON e.id = p.inbox_id WHERE e.event_id = ?');
  return {
    clock,
    memory,
    status,
    gate,
    processor,
    downtime,
    metrics,
    mappingsPut,
    store(body: { eventId?: unknown; eventType?: unknown }) {
      const eventId = String(body.eventId ?? randomUUID());
      inbox.insertBatch([{ eventId, eventType: String(body.eventType), headers: {}, body: Buffer.from(JSON.stringify(body)), receivedAt: clock.now() }]);
      return eventId;
    },
    state: (eventId: string) => state.get(eventId) as { state: string; attempts: number; next_attempt_at: number | null } | undefined,
    alerts: () => lines().filter((l) => l.alert === true),
    emrState: () => status.components().find((c) => c.name === 'emr')!,
    gauge: async () => (await metrics.registry.getSingleMetric('emr_bridge_emr_downtime')!.get()).values[0]!.value,
  };
}

describe('the processor during a planned EMR downtime', () => {
  it('applies everything received during the window after it, in order, with no attempt spent and no incident', async () => {
    const d = await downtimeProcessor();
    d.clock.set(STARTS + 5 * MINUTE);
    expect(d.downtime.current()).toMatchObject({ until: ENDS, source: 'schedule' });
    const first = d.store(appointmentEvent({ occurredAt: '2026-03-08T06:04:00.000Z' }));
    const moved = d.store(
      appointmentEvent({ eventType: 'appointment.rescheduled', occurredAt: '2026-03-08T06:30:00.000Z', startsAt: '2026-03-20T10:00:00.000Z' }),
    );
    const other = d.store(appointmentEvent({ serviceId: 'apt_2', occurredAt: '2026-03-08T07:00:00.000Z' }));
    // Every few minutes through the window (across the change of the clocks at 07:00Z): nothing reaches the EMR.
    for (let t = STARTS + 5 * MINUTE; t < ENDS; t += 7 * MINUTE) {
      d.clock.set(t);
      await d.processor.runOnce();
    }
    expect(d.memory.calls).toBe(0);
    for (const id of [first, moved, other]) expect(d.state(id)).toMatchObject({ state: 'pending', attempts: 0 });
    expect(d.emrState()).toMatchObject({ ok: true, downtime: { until: '2026-03-08T08:00:00.000Z' } });
    expect(await d.gauge()).toBe(1);

    // The window ends: one ping says the EMR is back, then everything goes at once.
    d.clock.set(ENDS);
    expect(d.downtime.current()).toBeUndefined();
    await d.processor.runOnce();
    await d.gate.probed();
    await d.processor.runOnce();
    for (const id of [first, moved, other]) expect(d.state(id)).toMatchObject({ state: 'applied', attempts: 1 });
    expect(d.memory.appointments().find((a) => a.serviceId === 'apt_1')?.startsAt).toBe('2026-03-20T10:00:00.000Z');
    expect(d.mappingsPut).toContain('appointment:apt_2');
    expect(d.alerts()).toEqual([]);
    expect(d.emrState()).toMatchObject({ ok: true });
    expect(d.emrState().downtime).toBeUndefined();
    expect(await d.gauge()).toBe(0);
  });

  it('makes an event whose EMR call fails as the window begins wait for its end, spending nothing', async () => {
    const d = await downtimeProcessor();
    d.clock.set(STARTS - MINUTE);
    const id = d.store(appointmentEvent());
    // The EMR goes down for its maintenance while the event is being applied, as the window begins (its
    // records claimed one by one, so that the patient's claim is the call it fails).
    d.memory.transactions = false;
    const ensurePatient = d.memory.ensurePatient.bind(d.memory);
    d.memory.ensurePatient = async (input) => {
      d.clock.set(STARTS);
      d.memory.down = true;
      return ensurePatient(input);
    };
    await d.processor.runOnce();
    expect(d.state(id)).toMatchObject({ state: 'retrying', attempts: 0, next_attempt_at: ENDS });
    expect(d.alerts()).toEqual([]);
    expect(d.emrState()).toMatchObject({ ok: true });
    const calls = d.memory.calls;
    d.clock.set(STARTS + 30 * MINUTE);
    await d.processor.runOnce();
    expect(d.memory.calls).toBe(calls);

    d.memory.down = false;
    d.memory.ensurePatient = ensurePatient;
    d.clock.set(ENDS);
    await d.processor.runOnce();
    await d.gate.probed();
    await d.processor.runOnce();
    expect(d.state(id)).toMatchObject({ state: 'applied', attempts: 1 });
  });

  it('probes an EMR that comes back late once at a time (an outage), then applies everything once it answers', async () => {
    const d = await downtimeProcessor();
    d.clock.set(STARTS + MINUTE);
    const ids = Array.from({ length: 20 }, (_, i) => d.store(appointmentEvent({ serviceId: `apt_${i}` })));
    await d.processor.runOnce();
    d.memory.down = true;
    d.clock.set(ENDS);
    await d.processor.runOnce();
    await d.gate.probed();
    // One call, the ping; the events were not tried, so none failed or spent an attempt.
    expect(d.memory.calls).toBe(1);
    for (const id of ids) expect(d.state(id)).toMatchObject({ state: 'pending', attempts: 0 });
    // An outage now, reported as one (an unplanned one, with its alert).
    expect(d.emrState()).toMatchObject({ ok: false, reason: expect.stringContaining('emr_unavailable') });
    expect(d.alerts().map((l) => l.msg)).toEqual(['emr is failing']);
    // Within the probe's pause nothing is asked again.
    await d.processor.runOnce();
    await d.processor.runOnce();
    expect(d.memory.calls).toBe(1);
    d.clock.advance(1_000);
    await d.processor.runOnce();
    await d.gate.probed();
    expect(d.memory.calls).toBe(2);

    d.memory.down = false;
    d.clock.advance(60_000);
    await d.processor.runOnce();
    await d.gate.probed();
    await d.processor.runOnce();
    for (const id of ids) expect(d.state(id)).toMatchObject({ state: 'applied', attempts: 1 });
    expect(d.emrState()).toMatchObject({ ok: true });
  });

  it('honours a downtime an operator sets, until its time, and resumes when the operator ends it early', async () => {
    const d = await downtimeProcessor();
    const t0 = Date.parse('2026-03-10T12:00:00.000Z');
    d.clock.set(t0);
    await d.downtime.start(t0 + 4 * 60 * MINUTE, 'EMR upgrade');
    const id = d.store(appointmentEvent());
    await d.processor.runOnce();
    expect(d.memory.calls).toBe(0);
    expect(d.emrState().downtime).toEqual({ until: '2026-03-10T16:00:00.000Z', reason: 'EMR upgrade' });
    d.clock.advance(60 * MINUTE);
    await d.downtime.end();
    await d.processor.runOnce();
    await d.gate.probed();
    await d.processor.runOnce();
    expect(d.state(id)).toMatchObject({ state: 'applied', attempts: 1 });
  });
});
