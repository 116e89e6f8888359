// Entity versions, mappings and the mapping outbox's rows, on every engine: a version never moves back, the
// first mapping recorded stands (and a link queues only the one that stands), and a queued mapping is handed
// out when due, then marked sent, retried later or parked.
import { afterEach, describe, expect, it } from 'vitest';
import { engines, type OpenedEngine } from './processor-engines.ts';

const T9 = '2026-01-15T09:00:00.000Z';
const T10 = '2026-01-15T10:00:00.000Z';

describe.each(engines)('stores of versions and mappings on $name', (engine) => {
  let e: OpenedEngine;
  afterEach(async () => {
    await e?.close();
  });

  describe('entity versions', () => {
    it('keeps the newest snapshot noted; an older one changes nothing', async () => {
      e = await engine.open();
      expect(await e.stores.versions.newest('patient:p')).toBeUndefined();
      await e.stores.versions.note('patient:p', { occurredAt: T10, hash: 'h10' }, 'e10');
      await e.stores.versions.note('patient:p', { occurredAt: T9, hash: 'h9' }, 'e9');
      expect(await e.stores.versions.newest('patient:p')).toEqual({ occurredAt: T10, hash: 'h10' });
    });

    it('stores the versions of an applied event with it, forward only, keeping the digest when a newer one brings none', async () => {
      e = await engine.open();
      const applied = async (occurredAt: string, hash: string | null) => {
        const { inboxId, eventId } = await e.store({ eventId: `ev-${occurredAt}-${hash}`, eventType: 'patient.created' });
        await e.stores.queue.commit([{ kind: 'applied', inboxId, versions: [{ entityKey: 'patient:p', version: { occurredAt, hash }, eventId }], claims: [] }]);
      };
      await applied(T9, 'h9');
      await applied(T10, null);
      expect(await e.stores.versions.newest('patient:p')).toEqual({ occurredAt: T10, hash: 'h9' });
      await applied(T9, 'h-old');
      expect(await e.stores.versions.newest('patient:p')).toEqual({ occurredAt: T10, hash: 'h9' });
    });
  });

  describe('mappings', () => {
    it('lets the first record for an entity stand, whoever records it next', async () => {
      e = await engine.open();
      expect(await e.stores.mappings.find('doctor', 'doc_1')).toBeUndefined();
      const [first, second] = await Promise.all([e.stores.mappings.record('doctor', 'doc_1', 'D1'), e.stores.mappings.record('doctor', 'doc_1', 'D2')]);
      expect(first).toBe(second);
      expect(await e.stores.mappings.record('doctor', 'doc_1', 'D3')).toBe(first);
      expect(await e.stores.mappings.find('doctor', 'doc_1')).toBe(first);
    });

    it('links a patient and queues its mapping when the link stands, and neither when another record stands', async () => {
      e = await engine.open();
      expect(await e.stores.mappings.link('patient', 'pat_1', 'P1')).toBe(true);
      expect(await e.stores.mappings.link('patient', 'pat_1', 'P1')).toBe(true);
      await e.stores.mappings.record('patient', 'pat_2', 'P2');
      expect(await e.stores.mappings.link('patient', 'pat_2', 'P-other')).toBe(false);
      expect(await e.query('SELECT service_id, external_id FROM mapping_outbox')).toEqual([{ service_id: 'pat_1', external_id: 'P1' }]);
    });

    it("writes an EMR module's state with the link, in its commit, and again when the mapping already stood", async () => {
      e = await engine.open();
      const stateOf = () => e.query('SELECT module, key, value FROM emr_state ORDER BY key');
      await e.stores.mappings.link('patient', 'pat_1', 'P1', { module: 'hl7v2', entries: [['mrn:pat_1', 'P1']] });
      expect(await stateOf()).toEqual([{ module: 'hl7v2', key: 'mrn:pat_1', value: 'P1' }]);
      await e.stores.mappings.link('patient', 'pat_1', 'P1', { module: 'hl7v2', entries: [['in:EMR|H|N2', 'AA']] });
      expect(await stateOf()).toEqual([
        { module: 'hl7v2', key: 'in:EMR|H|N2', value: 'AA' },
        { module: 'hl7v2', key: 'mrn:pat_1', value: 'P1' },
      ]);
    });

    it('records neither the mapping nor the state when the state cannot be written', async () => {
      e = await engine.open();
      // A value the table refuses (NOT NULL): the write fails inside the link's transaction.
      const refused = { module: 'hl7v2', entries: [['mrn:pat_1', null as unknown as string] as const] };
      await expect(e.stores.mappings.link('patient', 'pat_1', 'P1', refused)).rejects.toThrow();
      expect(await e.query('SELECT service_id FROM emr_mappings')).toEqual([]);
      expect(await e.query('SELECT service_id FROM mapping_outbox')).toEqual([]);
      expect(await e.query('SELECT key FROM emr_state')).toEqual([]);
    });
  });

  describe('the mapping outbox', () => {
    /** Queues mappings the way an applied event does. */
    const queue = async (...serviceIds: string[]) => {
      const { inboxId } = await e.store({ eventId: `ev-${serviceIds.join('-')}`, eventType: 'appointment.created' });
      await e.stores.queue.commit([
        {
          kind: 'applied',
          inboxId,
          versions: [],
          claims: serviceIds.map((serviceId) => ({ entityType: 'doctor' as const, serviceId, emrId: `E-${serviceId}` })),
        },
      ]);
    };
    const state = async () =>
      Object.fromEntries(
        (await e.query<{ service_id: string; state: string; attempts: number }>('SELECT service_id, state, attempts FROM mapping_outbox')).map((r) => [
          r.service_id,
          `${r.state}/${r.attempts}`,
        ]),
      );

    it('hands out what is due, and records it sent, retried later or parked, each attempt counted', async () => {
      e = await engine.open();
      await queue('d1', 'd2', 'd3');
      expect(await e.stores.mappingOutbox.pending()).toBe(3);
      const due = await e.stores.mappingOutbox.claimDue(10, 60_000);
      expect(due.map((m) => m.serviceId).sort()).toEqual(['d1', 'd2', 'd3']);
      expect(due.find((m) => m.serviceId === 'd1')).toEqual({ entityType: 'doctor', serviceId: 'd1', externalId: 'E-d1', attempts: 0, traceContext: null });
      const [d1, d2, d3] = ['d1', 'd2', 'd3'].map((s) => due.find((m) => m.serviceId === s)!);
      await e.stores.mappingOutbox.markSent([d1!]);
      await e.stores.mappingOutbox.retryAt(d2!, e.clock.now() + 90_000, 'service_unreachable: down');
      await e.stores.mappingOutbox.markDead(d3!, 'mapping_conflict: mapped elsewhere');
      expect(await state()).toEqual({ d1: 'sent/1', d2: 'pending/1', d3: 'dead/1' });
      expect(await e.stores.mappingOutbox.pending()).toBe(1);
      expect(await e.stores.readings.mappingsPending()).toBe(1);
      e.clock.advance(90_000);
      expect((await e.stores.mappingOutbox.claimDue(10, 60_000)).map((m) => m.serviceId)).toEqual(['d2']);
    });

    it('ages the oldest mapping waiting from when it was queued', async () => {
      e = await engine.open();
      expect(await e.stores.readings.oldestPendingMappingAt()).toBeUndefined();
      const t0 = e.clock.now();
      await queue('d1');
      e.clock.advance(5_000);
      await queue('d2');
      expect(await e.stores.readings.oldestPendingMappingAt()).toBe(t0);
    });
  });
});
