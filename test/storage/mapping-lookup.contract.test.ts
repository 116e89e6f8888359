// Mappings looked up both ways, on every engine: a serviceId's mapping of each entity type, the mappings to an
// EMR id (of one type when asked), whether the service has each one (posted by the outbox, or never needing
// it), and the EMR id search served by its index.
import { afterEach, describe, expect, it } from 'vitest';
import { engines, type OpenedEngine } from './processor-engines.ts';

describe.each(engines)('the mapping lookup on $name', (engine) => {
  let e: OpenedEngine;
  afterEach(async () => {
    await e?.close();
  });

  it("finds a serviceId's mappings of every type, and says which the service has", async () => {
    e = await engine.open();
    // Known to the service already (an event carried its externalId): recorded, never queued.
    await e.stores.mappings.record('patient', 'svc_1', 'p-10');
    // Queued for the service, then posted; and one still queued.
    await e.stores.mappings.link('appointment', 'svc_1', 'a-20');
    await e.stores.mappings.link('doctor', 'doc_1', 'd-30');
    const due = await e.stores.mappingOutbox.claimDue(10, 60_000);
    await e.stores.mappingOutbox.markSent(due.filter((m) => m.entityType === 'appointment'));

    expect(await e.stores.mappingLookup.byServiceId('svc_1')).toEqual([
      { entityType: 'appointment', serviceId: 'svc_1', emrId: 'a-20', posted: true },
      { entityType: 'patient', serviceId: 'svc_1', emrId: 'p-10', posted: true },
    ]);
    expect(await e.stores.mappingLookup.byServiceId('doc_1')).toEqual([{ entityType: 'doctor', serviceId: 'doc_1', emrId: 'd-30', posted: false }]);
    expect(await e.stores.mappingLookup.byServiceId('nobody')).toEqual([]);
  });

  it('finds the mappings to an EMR id, of one entity type when asked', async () => {
    e = await engine.open();
    await e.stores.mappings.record('patient', 'pat_1', 'shared-7');
    await e.stores.mappings.record('location', 'loc_1', 'shared-7');
    expect((await e.stores.mappingLookup.byEmrId('shared-7')).map((m) => m.entityType)).toEqual(['location', 'patient']);
    expect(await e.stores.mappingLookup.byEmrId('shared-7', 'patient')).toEqual([
      { entityType: 'patient', serviceId: 'pat_1', emrId: 'shared-7', posted: true },
    ]);
    expect(await e.stores.mappingLookup.byEmrId('shared-7', 'doctor')).toEqual([]);
  });

  it('searches by EMR id with its index, and by serviceId with the primary key', async () => {
    e = await engine.open();
    expect(await e.explain("SELECT service_id FROM emr_mappings m WHERE m.emr_id = 'x'")).toMatch(/emr_mappings_emr/);
    expect(
      await e.explain("SELECT service_id FROM emr_mappings m WHERE m.entity_type IN ('appointment', 'patient', 'doctor', 'location') AND m.service_id = 'x'"),
    ).toMatch(engine.name === 'sqlite' ? /USING (COVERING )?INDEX sqlite_autoindex_emr_mappings_1/ : /emr_mappings_pkey/);
  });
});
