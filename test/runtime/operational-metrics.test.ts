// The metrics an on-call engineer alerts on, read from a processor's stores (SQLite) with a manual clock: the
// ages of the oldest unprocessed event, unsent document and undelivered mapping (0 when none waits), the
// inbox depth without the mapping backlog, and whether each dependency answered its last call.
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.ts';
import { registerAdapterOperationalMetrics } from '../../src/runtime/operational-metrics.ts';
import { createSqliteDocumentStore } from '../../src/storage/sqlite/documents.ts';
import { ServiceCallError } from '../../src/service-client/errors.ts';
import { createDependencyStatus } from '../../src/status/dependency-status.ts';
import { appointmentEvent, processorFixture } from '../support/processor-fixture.ts';
import { PDF } from '../support/simulator-fixture.ts';

function fixture() {
  const f = processorFixture({ PROCESSOR_MAX_ATTEMPTS: '100' });
  const status = createDependencyStatus({ clock: f.clock, logger: silentLogger() });
  const outbox = createSqliteDocumentStore(f.db, f.clock);
  let writable = true;
  registerAdapterOperationalMetrics({ metrics: f.metrics, readings: f.stores.readings, clock: f.clock, status, outbox, databaseWritable: () => writable });
  /** The value of one sample on /metrics (labels as written there, e.g. `{dependency="emr"}`). */
  const sample = async (name: string, labels = ''): Promise<number> => {
    const text = await f.metrics.registry.metrics();
    const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
    if (!line) throw new Error(`no sample ${name}${labels} in:\n${text}`);
    return Number(line.split(' ')[1]);
  };
  return { ...f, status, outbox, sample, setWritable: (w: boolean) => (writable = w) };
}

describe('age metrics', () => {
  it('reads 0 for every age when nothing waits', async () => {
    const f = fixture();
    expect(await f.sample('emr_bridge_oldest_unprocessed_event_age_seconds')).toBe(0);
    expect(await f.sample('emr_bridge_oldest_unsent_document_age_seconds')).toBe(0);
    expect(await f.sample('emr_bridge_oldest_undelivered_mapping_age_seconds')).toBe(0);
  });

  it('ages the oldest event from when it was received, taken in or not, until it is applied', async () => {
    const f = fixture();
    f.emr.down = true;
    f.store(appointmentEvent({ serviceId: 'apt_1' }));
    f.clock.advance(90_000);
    f.store(appointmentEvent({ serviceId: 'apt_2' }));
    expect(await f.sample('emr_bridge_oldest_unprocessed_event_age_seconds')).toBe(90);
    await f.processor.runOnce();
    f.clock.advance(30_000);
    expect(await f.sample('emr_bridge_oldest_unprocessed_event_age_seconds')).toBe(120);
    expect(await f.sample('emr_bridge_inbox_depth')).toBe(2);
    f.emr.down = false;
    f.clock.advance(60_000);
    await f.processor.runOnce();
    expect(await f.sample('emr_bridge_oldest_unprocessed_event_age_seconds')).toBe(0);
    expect(await f.sample('emr_bridge_inbox_depth')).toBe(0);
  });

  it('ages the oldest queued document from when it entered the outbox, and drops it once sent', async () => {
    const f = fixture();
    const add = (externalId: string) =>
      f.outbox.enqueue({
        externalId,
        documentType: 'lab_report',
        source: 'api',
        request: { externalId, patientPhone: '+15550001111', patientName: 'P', label: 'L', file: { base64: PDF.toString('base64'), filename: 'r.pdf' } },
      });
    await add('lab-old');
    f.clock.advance(300_000);
    await add('lab-new');
    f.clock.advance(120_000);
    expect(await f.sample('emr_bridge_oldest_unsent_document_age_seconds')).toBe(420);
    await f.outbox.recordOutcome('lab-old', { state: 'SENT' });
    expect(await f.sample('emr_bridge_oldest_unsent_document_age_seconds')).toBe(120);
  });

  it('counts waiting mappings apart from the inbox depth, and ages the oldest one', async () => {
    const f = fixture();
    f.failMappings(new ServiceCallError({ code: 'service_unreachable', message: 'down', retryable: true }));
    f.store(appointmentEvent());
    await f.processor.runOnce();
    f.clock.advance(45_000);
    expect(await f.sample('emr_bridge_inbox_depth')).toBe(0);
    expect(await f.sample('emr_bridge_mapping_backlog')).toBe(4);
    expect(await f.sample('emr_bridge_oldest_undelivered_mapping_age_seconds')).toBe(45);
    f.failMappings(undefined);
    f.clock.advance(60_000);
    await f.processor.runOnce();
    expect(await f.sample('emr_bridge_mapping_backlog')).toBe(0);
    expect(await f.sample('emr_bridge_oldest_undelivered_mapping_age_seconds')).toBe(0);
  });
});

describe('dependency metrics', () => {
  it('reads 1 for each dependency that answered its last call and 0 for one that did not', async () => {
    const f = fixture();
    f.status.failing('emr', 'emr_unavailable: down');
    expect(await f.sample('emr_bridge_dependency_up', '{dependency="emr"}')).toBe(0);
    expect(await f.sample('emr_bridge_dependency_up', '{dependency="service"}')).toBe(1);
    expect(await f.sample('emr_bridge_dependency_up', '{dependency="database"}')).toBe(1);
    f.status.ok('emr');
    f.setWritable(false);
    expect(await f.sample('emr_bridge_dependency_up', '{dependency="emr"}')).toBe(1);
    expect(await f.sample('emr_bridge_dependency_up', '{dependency="database"}')).toBe(0);
  });
});
