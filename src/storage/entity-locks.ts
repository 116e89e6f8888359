// One-at-a-time sections per entity key. The processor applies several entities' events at once, and two of
// them can name the same doctor, location or patient: without this, both could miss the mapping row and both
// ask the EMR to create the record, which is safe only where the EMR's conditional create is atomic (not every
// FHIR server's is). With one process (SQLite) a lock in memory is enough (./sqlite/entity-locks.ts); replicas
// sharing PostgreSQL hold an advisory lock per key (./postgres/entity-locks.ts), behind the same lock in memory
// so that sections of one key inside a replica wait here rather than each on a connection of their own.

export interface EntityLocks {
  /**
   * Runs `fn` once no other section for the same key runs (in this process or, on PostgreSQL, in any replica);
   * the key is held until `fn` settles, and `fn`'s result or failure is passed on.
   */
  run<T>(key: string, fn: () => Promise<T>): Promise<T>;
  /**
   * Runs `fn` holding every key at once, each as run would hold it, taken one after another in the order given
   * (duplicates once). Callers give their keys in one order (processor/apply.ts: a patient's first, then claim
   * keys sorted), so two sections never wait for each other in a ring. On PostgreSQL the keys share one
   * connection: a section holds no more connections than run's.
   */
  runAll<T>(keys: readonly string[], fn: () => Promise<T>): Promise<T>;
}

/** Sections in memory, one after another per key, in call order; keys independent. */
export interface MemoryEntityLocks extends EntityLocks {
  /** Keys with a section running or waiting (for tests). */
  held(): number;
}

/** `fn` run inside the section of each key in turn: the first key's outermost. */
export function nestSections<T>(run: EntityLocks['run'], keys: readonly string[], fn: () => Promise<T>): Promise<T> {
  const [first, ...rest] = [...new Set(keys)];
  return first === undefined ? fn() : run(first, () => nestSections(run, rest, fn));
}

export function createMemoryEntityLocks(): MemoryEntityLocks {
  const tails = new Map<string, Promise<unknown>>();
  const locks: MemoryEntityLocks = {
    run(key, fn) {
      const previous = tails.get(key) ?? Promise.resolve();
      const result = previous.then(fn, fn);
      const tail = result.then(
        () => undefined,
        () => undefined,
      );
      tails.set(key, tail);
      // The last one out removes the key, so the map holds only keys in use.
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key);
      });
      return result;
    },
    runAll: (keys, fn) => nestSections(locks.run, keys, fn),
    held: () => tails.size,
  };
  return locks;
}
