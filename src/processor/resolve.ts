// Which EMR record each participant of an event is, for the records the adapter may not create, decided before
// anything is written: the crosswalk (a person's, an import's, the snapshot's or the EMR's), the mapping recorded
// before, the EMR's own record carrying the service's id, the snapshot's externalId. Whatever is still unknown is
// listed in the crosswalk as unmapped, every record at once, and the event waits for it (RecordsUnmapped): no
// attempt used, no incident, nothing written to the EMR. Records the adapter may create are left to find-or-create,
// unless the port prefers their EMR id when the crosswalk or the snapshot has one (HL7 v2's doctors and locations).
import type { EmrPort, MappedEntityType } from '../emr/port.ts';
import type { CrosswalkStore, NeededRecord } from '../storage/crosswalk.ts';
import { recordKey } from '../storage/crosswalk.ts';
import type { EntityLocks } from '../storage/entity-locks.ts';
import type { MappingStore } from '../storage/mappings.ts';
import type { LackedRecord } from '../storage/processing.ts';
import { claimKey } from './apply-records.ts';

/** A participant as the event names it: its type, its service id, the service's EMR id for it, its name. */
export interface Participant extends NeededRecord {
  externalId: string | null;
}

/** The event lacks these records (in the order patient, doctor, location): it waits until a person maps them. */
export class RecordsUnmapped extends Error {
  constructor(readonly lacks: LackedRecord[]) {
    super(`waiting for a mapping: ${lacks.map(recordKey).join(', ')}`);
    this.name = 'RecordsUnmapped';
  }
}

export interface ResolveDeps {
  emr: Pick<EmrPort, 'mayCreate' | 'prefersMapped' | 'findByServiceId'>;
  crosswalk: Pick<CrosswalkStore, 'mapped' | 'need' | 'set'>;
  mappings: Pick<MappingStore, 'find'>;
  locks: EntityLocks;
}

/** The EMR ids of the participants the adapter may not create (or whose mapping the port prefers), by entity type; the others are absent. */
export type Resolved = Partial<Record<MappedEntityType, string>>;

const ORDER: Record<MappedEntityType, number> = { patient: 0, doctor: 1, location: 2 };

/**
 * Only the EMR's own record may stand for it: found by the service's id (when `search`), else the id the service
 * knows it by.
 */
async function matchInEmr(deps: ResolveDeps, p: Participant, search = true): Promise<string | undefined> {
  return deps.locks.run(claimKey(p.entityType, p.serviceId), async () => {
    // Mapped meanwhile (a person, or another event in this section before): that stands.
    const mapped = (await deps.crosswalk.mapped([p])).get(recordKey(p));
    if (mapped !== undefined) return mapped;
    const found = search ? await deps.emr.findByServiceId?.(p.entityType, p.serviceId) : undefined;
    if (found !== undefined) {
      await deps.crosswalk.set(p, found, 'emr', { post: false });
      return found;
    }
    if (p.externalId === null) return undefined;
    await deps.crosswalk.set(p, p.externalId, 'service', { post: false });
    return p.externalId;
  });
}

/**
 * Resolves every participant the adapter may not create, and each one whose mapping the port prefers where there is
 * one; throws RecordsUnmapped naming all it could not, after listing them in the crosswalk. Costs nothing where the
 * EMR lets the adapter create everything and the port prefers no mapping.
 */
export async function resolveOwned(deps: ResolveDeps, participants: readonly Participant[]): Promise<Resolved> {
  const owned: Participant[] = [];
  const preferred: Participant[] = [];
  for (const p of participants) {
    if (deps.emr.mayCreate && !(await deps.emr.mayCreate(p.entityType))) owned.push(p);
    else if (deps.emr.prefersMapped && (await deps.emr.prefersMapped(p.entityType))) preferred.push(p);
  }
  if (!owned.length && !preferred.length) return {};
  // The crosswalk first: a person's mapping wins over what was recorded or the snapshot says.
  const mapped = await deps.crosswalk.mapped([...owned, ...preferred]);
  const resolved = await resolvePreferred(deps, preferred, mapped);
  const lacking: Participant[] = [];
  for (const p of owned) {
    const id = mapped.get(recordKey(p)) ?? (await deps.mappings.find(p.entityType, p.serviceId)) ?? (await matchInEmr(deps, p));
    if (id !== undefined) resolved[p.entityType] = id;
    else lacking.push(p);
  }
  if (lacking.length) {
    lacking.sort((a, b) => ORDER[a.entityType] - ORDER[b.entityType]);
    await deps.crosswalk.need(lacking.map(({ entityType, serviceId, name }) => ({ entityType, serviceId, name })));
    throw new RecordsUnmapped(lacking.map(({ entityType, serviceId }) => ({ entityType, serviceId })));
  }
  return resolved;
}

/**
 * The records the adapter may create whose EMR id the port prefers: the crosswalk's, else the snapshot's externalId
 * (kept in the crosswalk as the service's). Nothing is searched and nothing waits: without either, the record is
 * found or created as usual (HL7 v2: named by the service's id), and never listed as unmapped.
 */
async function resolvePreferred(deps: ResolveDeps, preferred: readonly Participant[], mapped: Map<string, string>): Promise<Resolved> {
  const resolved: Resolved = {};
  for (const p of preferred) {
    const id = mapped.get(recordKey(p)) ?? (p.externalId === null ? undefined : await matchInEmr(deps, p, false));
    if (id !== undefined) resolved[p.entityType] = id;
  }
  return resolved;
}
