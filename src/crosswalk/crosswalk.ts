// The one module that changes the crosswalk for a person (an operator's mapping, an import's line, a removal):
// each change is checked against the EMR first (the record must exist), against the one-chart rule (two service
// patients never share one EMR patient), and against what the adapter itself recorded; it is made under the
// entity's lock (the processor finds or creates the same record under it, so never two charts), posted to the
// service through the mapping outbox, wakes the events waiting for it on every replica, and is audited. The
// processor's own entries (found in the EMR, the snapshot's externalId) are written by src/processor/resolve.ts.
import type { Auditor } from '../audit/auditor.ts';
import type { EmrPort, RecordSuggestion } from '../emr/port.ts';
import type { Coordination } from '../storage/coordination.ts';
import type { ProcessorStores } from '../storage/processor-stores.ts';
import type { CrosswalkItem, CrosswalkQuery, CrosswalkStore } from '../storage/crosswalk.ts';
import { recordKey } from '../storage/crosswalk.ts';
import type { EntityLocks } from '../storage/entity-locks.ts';
import type { MappingLookup, MappingStore } from '../storage/mappings.ts';
import type { AuditEntry } from '../storage/audit.ts';
import type { LackedRecord } from '../storage/processing.ts';
import { claimKey } from '../processor/apply-records.ts';
import { CrosswalkRefusal } from './errors.ts';
import { patientQuery } from './patient-query.ts';

/** Who asked, as the audit trail records it. */
export type Requester = Pick<AuditEntry, 'actor' | 'door' | 'from'>;

export interface CrosswalkDeps {
  store: CrosswalkStore;
  mappings: Pick<MappingStore, 'find'>;
  /** The adapter's own mappings by EMR id: a chart it mapped to one patient is not given to another. */
  lookup: Pick<MappingLookup, 'byEmrId'>;
  locks: EntityLocks;
  emr: Pick<EmrPort, 'recordExists' | 'suggest' | 'refs'>;
  auditor: Pick<Auditor, 'record'>;
  /** A patient's name and phone for suggestions, from the newest event waiting for it (./patient-query.ts): never kept. */
  patientQuery?: (record: LackedRecord) => Promise<{ name: string; phone: string } | undefined>;
  /** Wakes every replica's processor (the woken events) and this one's mapping outbox. */
  coordination?: Pick<Coordination, 'notify'>;
  onMappingQueued?: () => void;
}

export interface Crosswalk {
  list(q: CrosswalkQuery): Promise<CrosswalkItem[]>;
  get(record: LackedRecord): Promise<CrosswalkItem | undefined>;
  /** Checks a mapping as `map` would, writing nothing: the refusal it would meet, if any. */
  check(record: LackedRecord, emrId: string): Promise<void>;
  /** Maps the record for a person (an operator, or one import line); returns the item as it now stands. */
  map(record: LackedRecord, emrId: string, source: 'operator' | 'import', who: Requester): Promise<CrosswalkItem>;
  /** Removes a mapping; later events need one again. Returns whether there was one. */
  unmap(record: LackedRecord, who: Requester): Promise<boolean>;
  /** The EMR's records a person may choose from, by the name the service gave it (and phone, for a patient). */
  suggestions(record: LackedRecord, query?: { name?: string; phone?: string }): Promise<RecordSuggestion[]>;
}

export function createCrosswalk(deps: CrosswalkDeps): Crosswalk {
  const { store } = deps;
  const audit = (who: Requester, action: string, record: LackedRecord, outcome: AuditEntry['outcome']) =>
    deps.auditor.record({ ...who, action, targets: [recordKey(record)], outcome });

  async function check(record: LackedRecord, emrId: string): Promise<void> {
    const exists = await deps.emr.recordExists?.(record.entityType, emrId);
    if (exists === false) throw new CrosswalkRefusal('emr_record_not_found', `the EMR has no ${deps.emr.refs.describe(record.entityType, emrId)}`);
    if (record.entityType === 'patient') {
      const recorded = (await deps.lookup.byEmrId(emrId, 'patient')).map((m) => m.serviceId);
      const others = [...(await store.holdersOf('patient', emrId)), ...recorded].filter((s) => s !== record.serviceId);
      if (others.length)
        throw new CrosswalkRefusal('patient_chart_taken', `EMR patient ${emrId} is already mapped to service patient ${others[0]}: one person, one chart`);
    }
    const recorded = await deps.mappings.find(record.entityType, record.serviceId);
    if (recorded !== undefined && recorded !== emrId)
      throw new CrosswalkRefusal(
        'mapped_by_adapter',
        `the adapter already stands ${recordKey(record)} for ${deps.emr.refs.describe(record.entityType, recorded)}`,
      );
  }

  async function map(record: LackedRecord, emrId: string, source: 'operator' | 'import', who: Requester): Promise<CrosswalkItem> {
    try {
      // Under the entity's lock: the processor's find-or-create of the same record waits, and then finds this.
      const woken = await deps.locks.run(claimKey(record.entityType, record.serviceId), async () => {
        await check(record, emrId);
        return (await store.set(record, emrId, source, { post: true })).woken;
      });
      await audit(who, 'crosswalk.map', record, 'ok');
      if (woken > 0) deps.coordination?.notify('events');
      deps.onMappingQueued?.();
      return (await store.get(record))!;
    } catch (err) {
      if (err instanceof CrosswalkRefusal) await audit(who, 'crosswalk.map', record, 'refused');
      throw err;
    }
  }

  return {
    list: (q) => store.list(q),
    get: (record) => store.get(record),
    check,
    map,
    async unmap(record, who) {
      const removed = await deps.locks.run(claimKey(record.entityType, record.serviceId), () => store.remove(record));
      await audit(who, 'crosswalk.unmap', record, removed ? 'ok' : 'not_found');
      return removed;
    },
    async suggestions(record, query = {}) {
      if (!deps.emr.suggest) return [];
      // A patient's name is not kept: the newest waiting event's snapshot gives it, when a person asks.
      const asked = query.name === undefined && record.entityType === 'patient' ? ((await deps.patientQuery?.(record)) ?? {}) : query;
      const name = asked.name ?? (await store.get(record))?.name ?? undefined;
      if (!name) return [];
      return deps.emr.suggest(record.entityType, { name, ...(asked.phone ? { phone: asked.phone } : {}) });
    },
  };
}

/**
 * The crosswalk over one engine's processor stores, as the composition root builds it: a patient's suggestions from
 * the newest event waiting for it (./patient-query.ts).
 */
export function crosswalkOverStores(
  stores: Pick<ProcessorStores, 'crosswalk' | 'mappings' | 'mappingLookup' | 'locks' | 'queue'>,
  deps: Pick<CrosswalkDeps, 'emr' | 'auditor' | 'coordination' | 'onMappingQueued'>,
): Crosswalk {
  return createCrosswalk({
    ...deps,
    store: stores.crosswalk,
    mappings: stores.mappings,
    lookup: stores.mappingLookup,
    locks: stores.locks,
    patientQuery: (record) => patientQuery({ store: stores.crosswalk, queue: stores.queue }, record),
  });
}
