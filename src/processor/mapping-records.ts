// The mapping store as the processor uses it while applying events. A mapping, once recorded, never changes
// (the first record stands), so a found one is kept in memory and not read again. Recording one is still
// durable before its EMR id is used, as it always was, but the records asked for at the same moment by the
// events in flight share one transaction (one fsync): a group commit, flushed once the current turn of the
// event loop has run.
import type { Clock } from '../clock.ts';
import type { MappingEntityType } from '../contract/api.ts';
import type { Db } from '../database/open.ts';
import { createMappingStore, type MappingStore } from '../mappings/store.ts';

export interface MappingRecords {
  find(entityType: MappingEntityType, serviceId: string): string | undefined;
  /** Records the EMR id of a service entity (the first record wins); resolves, once on disk, to the id that stands. */
  record(entityType: MappingEntityType, serviceId: string, emrId: string): Promise<string>;
}

/** Mappings kept in memory, at most (past it, the oldest found is forgotten and read again when needed). */
const FOUND_MAX = 20_000;

interface Waiting {
  entityType: MappingEntityType;
  serviceId: string;
  emrId: string;
  resolve: (standing: string) => void;
  reject: (err: unknown) => void;
}

export function createMappingRecords(db: Db, clock: Clock, store: MappingStore = createMappingStore(db, clock)): MappingRecords {
  const found = new Map<string, string>();
  const remember = (key: string, emrId: string) => {
    if (found.size >= FOUND_MAX) found.delete(found.keys().next().value as string);
    found.set(key, emrId);
  };
  let waiting: Waiting[] = [];
  const recordAll = db.transaction((batch: Waiting[]) => batch.map((w) => store.record(w.entityType, w.serviceId, w.emrId)));

  function flush(): void {
    const batch = waiting;
    waiting = [];
    let standing: string[];
    try {
      standing = recordAll.immediate(batch);
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    batch.forEach((w, i) => {
      remember(`${w.entityType}:${w.serviceId}`, standing[i]!);
      w.resolve(standing[i]!);
    });
  }

  return {
    find(entityType, serviceId) {
      const key = `${entityType}:${serviceId}`;
      const known = found.get(key);
      if (known !== undefined) return known;
      const stored = store.find(entityType, serviceId);
      if (stored !== undefined) remember(key, stored);
      return stored;
    },
    record(entityType, serviceId, emrId) {
      return new Promise<string>((resolve, reject) => {
        if (waiting.length === 0) setImmediate(flush);
        waiting.push({ entityType, serviceId, emrId, resolve, reject });
      });
    },
  };
}
