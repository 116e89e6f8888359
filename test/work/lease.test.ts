// The one lease rule: a claim takes an item's lease only where none is live and counts an attempt; an item
// whose lease ran out is claimable again; at start every lease held by a stopped process is taken over.
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { openDatabase } from '../../src/sqlite/open.ts';
import { silentLogger } from '../../src/logger.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import { createLeaseClaim } from '../../src/storage/sqlite/lease.ts';
import { takeOverLeases } from '../../src/work/lease.ts';

function fixture() {
  const db = openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS });
  db.exec('CREATE TABLE items (id TEXT PRIMARY KEY, attempts INTEGER NOT NULL DEFAULT 0, lease_until INTEGER)');
  db.exec("INSERT INTO items (id) VALUES ('a'), ('b'), ('c')");
  const clock = createManualClock();
  const due = db.prepare('SELECT id, attempts FROM items WHERE lease_until IS NULL OR lease_until <= ? ORDER BY id LIMIT ?');
  const take = db.prepare('UPDATE items SET lease_until = ?, attempts = attempts + 1 WHERE id = ? AND (lease_until IS NULL OR lease_until <= ?)');
  const claim = createLeaseClaim<{ id: string; attempts: number }>(db, clock, {
    due: (now, limit) => due.all(now, limit) as { id: string; attempts: number }[],
    take: (row, until, now) => take.run(until, row.id, now).changes === 1,
  });
  const release = () => db.prepare('UPDATE items SET lease_until = NULL WHERE lease_until IS NOT NULL').run().changes;
  return { clock, claim, release };
}

describe('the lease', () => {
  it('hands an item to one claim at a time, counting the attempt', () => {
    const f = fixture();
    expect(f.claim(2, 1_000)).toEqual([
      { id: 'a', attempts: 1 },
      { id: 'b', attempts: 1 },
    ]);
    expect(f.claim(5, 1_000)).toEqual([{ id: 'c', attempts: 1 }]);
    expect(f.claim(5, 1_000)).toEqual([]);
  });

  it('hands an item out again once its lease ran out (its holder crashed)', () => {
    const f = fixture();
    f.claim(5, 1_000);
    f.clock.advance(999);
    expect(f.claim(5, 1_000)).toEqual([]);
    f.clock.advance(1);
    expect(f.claim(1, 1_000)).toEqual([{ id: 'a', attempts: 2 }]);
  });

  it('takes over at once every lease of a process that stopped, and says how many', () => {
    const f = fixture();
    f.claim(2, 60_000);
    expect(takeOverLeases(f.release, silentLogger(), 'taken over')).toBe(2);
    expect(f.claim(5, 1_000).map((r) => r.id)).toEqual(['a', 'b', 'c']);
  });
});
