// Coordination with one process per database (SQLite): there is no other replica to agree with. A job held
// by name still runs once at a time within this process (a second asks while the first runs: skipped, as
// another replica's hold would skip it), and a notification reaches this process's listeners at once.
import type { Coordination, WorkTopic } from '../coordination.ts';

export function createSqliteCoordination(): Coordination {
  const running = new Set<string>();
  const listeners = new Map<WorkTopic, Set<() => void>>();
  return {
    async exclusive(name, job) {
      if (running.has(name)) return undefined;
      running.add(name);
      try {
        return await job();
      } finally {
        running.delete(name);
      }
    },
    notify(topic) {
      for (const listener of [...(listeners.get(topic) ?? [])]) listener();
    },
    onWork(topic, listener) {
      const set = listeners.get(topic) ?? new Set();
      listeners.set(topic, set);
      set.add(listener);
      return () => void set.delete(listener);
    },
    async close() {
      listeners.clear();
    },
  };
}
