// One-at-a-time sections per entity key, inside this process. The processor applies several entities'
// events at once, and two of them can name the same doctor, location or patient: without this, both could
// miss the mapping row and both ask the EMR to create the record, which is safe only where the EMR's
// conditional create is atomic (not every FHIR server's is). One adapter process owns one database, so a
// lock in memory is enough.

export interface EntityLocks {
  /** Runs `fn` once every earlier call for the same key has settled. */
  run<T>(key: string, fn: () => Promise<T>): Promise<T>;
  /** Keys with a section running or waiting (for tests). */
  held(): number;
}

export function createEntityLocks(): EntityLocks {
  const tails = new Map<string, Promise<unknown>>();
  return {
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
    held: () => tails.size,
  };
}
