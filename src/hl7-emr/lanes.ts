// The notifier's lanes: each queued message is dispatched, once, to lane stable-hash(key) % lanes, into that
// lane's first-in-first-out line. A lane sends its line's head and takes it off only once it is acknowledged,
// so one lane's messages go one at a time, oldest first, and those of one key (one patient, one appointment)
// keep their order whatever the other lanes do. A message without a key (data files written before keys) goes
// to lane 0, so such a queue keeps exactly its order. With one lane every message is in lane 0, in queue order.
import type { QueuedMessage } from './state.ts';

/** FNV-1a (32 bits) of the key's UTF-16 code units, mod `lanes`: the same lane for a key in every process. */
export function laneOf(key: string | undefined, lanes: number): number {
  if (key === undefined || lanes <= 1) return 0;
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % lanes;
}

/** A first-in-first-out line that takes from its head without copying the rest. */
class Line {
  private items: (QueuedMessage | undefined)[] = [];
  private start = 0;
  push(m: QueuedMessage): void {
    this.items.push(m);
  }
  head(): QueuedMessage | undefined {
    return this.items[this.start];
  }
  shift(): void {
    this.items[this.start++] = undefined;
    // Compacted once the taken part is half the array: amortised O(1) per message.
    if (this.start > 64 && this.start * 2 >= this.items.length) {
      this.items = this.items.slice(this.start);
      this.start = 0;
    }
  }
}

export interface Lanes {
  /** Puts a newly queued message on its lane's line (a message already dispatched is not put again). */
  dispatch(m: QueuedMessage): number;
  /** The lane's oldest message not yet acknowledged: the next to send (or the one being sent). */
  head(lane: number): QueuedMessage | undefined;
  /** The lane's head was acknowledged: the next one is its head now. */
  delivered(lane: number): void;
}

export function createLanes(count: number): Lanes {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`lanes must be a positive integer, got ${count}`);
  const lines = Array.from({ length: count }, () => new Line());
  const dispatched = new Set<string>();
  return {
    dispatch(m) {
      const lane = laneOf(m.key, count);
      if (dispatched.has(m.id)) return lane;
      dispatched.add(m.id);
      lines[lane]!.push(m);
      return lane;
    },
    head: (lane) => lines[lane]!.head(),
    delivered(lane) {
      const line = lines[lane]!;
      const m = line.head();
      if (!m) return;
      line.shift();
      dispatched.delete(m.id);
    },
  };
}
