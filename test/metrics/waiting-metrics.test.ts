// The waiting gauges, read from the crosswalk when scraped: how many events wait for a mapping per entity type (the
// first record each lacks), and how long the oldest has waited; every type shown, at 0 when none waits, and both
// falling back once the record is mapped.
import { describe, expect, it } from 'vitest';
import { registerWaitingMetrics } from '../../src/metrics/waiting-metrics.ts';
import { appointmentEvent, processorFixture, type ProcessorFixture } from '../support/processor-fixture.ts';

/** A processor beside an EMR that keeps its doctors and locations, with the waiting gauges on its registry. */
function vendorLike(): ProcessorFixture {
  const f = processorFixture();
  f.emr.creatable.delete('doctor');
  f.emr.creatable.delete('location');
  registerWaitingMetrics(f.metrics, { clock: f.clock, waiting: () => f.stores.crosswalk.waiting() });
  return f;
}

/** `name{entity_type="…"}` → value, as scraped. */
async function scrape(f: ProcessorFixture, name: string): Promise<Record<string, number>> {
  const text = await f.metrics.registry.metrics();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(new RegExp(`^${name}\\{entity_type="(\\w+)"\\} (\\S+)$`, 'gm'))) out[m[1]!] = Number(m[2]);
  return out;
}

describe('emr_bridge_events_waiting and emr_bridge_events_waiting_oldest_seconds', () => {
  it('count the events waiting per entity type and age the oldest, each type shown', async () => {
    const f = vendorLike();
    const location = f.emr.addMasterRecord({ entityType: 'location', name: 'Test Clinic Room 1' });
    await f.stores.crosswalk.set({ entityType: 'location', serviceId: 'loc_1' }, location, 'operator', { post: true });
    f.store(appointmentEvent({ serviceId: 'apt_1' }));
    await f.processor.runOnce();
    f.clock.advance(60_000);
    f.store(appointmentEvent({ serviceId: 'apt_2' }));
    await f.processor.runOnce();
    f.clock.advance(30_000);

    expect(await scrape(f, 'emr_bridge_events_waiting')).toEqual({ patient: 0, doctor: 2, location: 0 });
    expect(await scrape(f, 'emr_bridge_events_waiting_oldest_seconds')).toEqual({ patient: 0, doctor: 90, location: 0 });
  });

  it('fall back to 0 once the record is mapped', async () => {
    const f = vendorLike();
    f.store(appointmentEvent());
    await f.processor.runOnce();
    expect(await scrape(f, 'emr_bridge_events_waiting')).toEqual({ patient: 0, doctor: 1, location: 0 });

    for (const [entityType, serviceId, name] of [
      ['doctor', 'doc_1', 'Dr Test Doctor'],
      ['location', 'loc_1', 'Test Clinic Room 1'],
    ] as const)
      await f.stores.crosswalk.set({ entityType, serviceId }, f.emr.addMasterRecord({ entityType, name }), 'operator', { post: true });
    await f.processor.runOnce();

    expect(await scrape(f, 'emr_bridge_events_waiting')).toEqual({ patient: 0, doctor: 0, location: 0 });
    expect(await scrape(f, 'emr_bridge_events_waiting_oldest_seconds')).toEqual({ patient: 0, doctor: 0, location: 0 });
  });
});
