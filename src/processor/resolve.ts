// Which EMR record each participant of an event is, for the records the adapter may not create, decided before
// anything is written: the crosswalk (a person's, an import's, the snapshot's or the EMR's), the mapping recorded
// before, the EMR's own record carrying the service's id, the snapshot's externalId. Whatever is still unknown is
// listed in the crosswalk as unmapped, every record at once, and the event waits for it (RecordsUnmapped): no
// attempt used, no incident, nothing written to the EMR. Records the adapter may create are left to find-or-create.
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
  emr: Pick<EmrPort, 'mayCreate' | 'findByServiceId'>;
  crosswalk: Pick<CrosswalkStore, 'mapped' | 'need' | 'set'>;
  mappings: Pick<MappingStore, 'find'>;
  locks: EntityLocks;
}

/** The EMR ids of the participants the adapter may not create, by entity type; the others are absent. */
export type Resolved = Partial<Record<MappedEntityType, string>>;

const ORDER: Record<MappedEntityType, number> = { patient: 0, doctor: 1, location: 2 };

/** Only the EMR's own record may stand for it: found by the service's id, else the id the service knows it by. */
async function matchInEmr(deps: ResolveDeps, p: Participant): Promise<string | undefined> {
  return deps.locks.run(claimKey(p.entityType, p.serviceId), async () => {
    // Mapped meanwhile (a person, or another event in this section before): that stands.
    const mapped = (await deps.crosswalk.mapped([p])).get(recordKey(p));
    if (mapped !== undefined) return mapped;
    const found = await deps.emr.findByServiceId?.(p.entityType, p.serviceId);
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
 * Resolves every participant the adapter may not create; throws RecordsUnmapped naming all it could not, after
 * listing them in the crosswalk. Costs nothing where the EMR lets the adapter create everything.
 */
export async function resolveOwned(deps: ResolveDeps, participants: readonly Participant[]): Promise<Resolved> {
  const owned: Participant[] = [];
  for (const p of participants) if (deps.emr.mayCreate && !(await deps.emr.mayCreate(p.entityType))) owned.push(p);
  if (!owned.length) return {};
  const resolved: Resolved = {};
  // The crosswalk first: a person's mapping wins over what was recorded or the snapshot says.
  const mapped = await deps.crosswalk.mapped(owned);
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
