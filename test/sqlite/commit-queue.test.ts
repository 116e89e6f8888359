// The connection's commit queue (src/sqlite/commit-queue.ts): the writes of a turn share one transaction, each
// in its own savepoint; a batch of only `ordered` writes commits without an fsync (synchronous=NORMAL) and the
// connection is back at FULL after it, whatever happened; one write due `now` makes its whole batch fsync; and an
// ordered write that has resolved survives its process being killed.
import { describe, expect, it } from 'vitest';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import { createCommitQueue } from '../../src/sqlite/commit-queue.ts';
import type { Db } from '../../src/sqlite/open.ts';
import { killedMidStream } from './support/killed-mid-stream.ts';
import { tempDatabases } from './support/temp-databases.ts';

const FULL = 2;
const NORMAL = 1;

const databases = tempDatabases('commit-queue');
const opened = (path = databases.dbPath()): Db => databases.opened({ path, migrationsDir: ADAPTER_MIGRATIONS });

const level = (db: Db) => db.pragma('synchronous', { simple: true }) as number;

/** A write that records a mapping row and says the synchronous level its transaction commits with. */
function recording(db: Db, serviceId: string) {
  const insert = db.prepare("INSERT INTO emr_mappings (entity_type, service_id, emr_id, created_at) VALUES ('patient', ?, ?, 0)");
  return () => {
    insert.run(serviceId, `Patient/${serviceId}`);
    return level(db);
  };
}

const rowCount = (db: Db) => db.prepare('SELECT count(*) FROM emr_mappings').pluck().get() as number;

describe('commit queue durability', () => {
  it('commits a batch of only ordered writes with synchronous NORMAL and puts FULL back after', async () => {
    const db = opened();
    const commits = createCommitQueue(db);
    expect(level(db)).toBe(FULL);
    const levels = await Promise.all([commits.run(recording(db, 'a'), { durable: 'ordered' }), commits.run(recording(db, 'b'), { durable: 'ordered' })]);
    expect(levels).toEqual([NORMAL, NORMAL]);
    expect(level(db)).toBe(FULL);
    expect(rowCount(db)).toBe(2);
  });

  it('commits the whole batch with FULL when one of its writes is due now', async () => {
    const db = opened();
    const commits = createCommitQueue(db);
    const levels = await Promise.all([commits.run(recording(db, 'a'), { durable: 'ordered' }), commits.run(recording(db, 'b'))]);
    expect(levels).toEqual([FULL, FULL]);
    expect(level(db)).toBe(FULL);
  });

  it('rejects an ordered write that throws alone, commits the others, and is back at FULL', async () => {
    const db = opened();
    const commits = createCommitQueue(db);
    const failing = commits.run(
      () => {
        recording(db, 'undone')();
        throw new Error('refused');
      },
      { durable: 'ordered' },
    );
    const kept = commits.run(recording(db, 'kept'), { durable: 'ordered' });
    await expect(failing).rejects.toThrow('refused');
    await expect(kept).resolves.toBe(NORMAL);
    expect(level(db)).toBe(FULL);
    expect(db.prepare('SELECT service_id FROM emr_mappings').pluck().all()).toEqual(['kept']);
  });

  it('keeps every ordered write that resolved when its process is killed', async () => {
    const path = databases.dbPath();
    // The child records mappings one after another with ordered durability, printing each once it resolved.
    const last = await killedMidStream('ordered-commits-forever.ts', path, 500);

    const db = opened(path);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(rowCount(db)).toBeGreaterThanOrEqual(last);
  });
});
