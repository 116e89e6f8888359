// Entity locks on every engine: sections of one key one after another, keys independent, a failure passed to
// its caller only; on PostgreSQL also across replicas (two pools on one database) and without a connection
// left behind.
import { afterEach, describe, expect, it } from 'vitest';
import type { EntityLocks } from '../../src/storage/entity-locks.ts';
import { engines, type OpenedEngine, postgresOnly } from './processor-engines.ts';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Two sections of `key`, one through each lock set, logging when each is inside. */
async function overlapping(key: string, first: EntityLocks, second: EntityLocks): Promise<string[]> {
  const log: string[] = [];
  const section = (locks: EntityLocks, name: string, ms: number) =>
    locks.run(key, async () => {
      log.push(`${name} in`);
      await tick(ms);
      log.push(`${name} out`);
    });
  const a = section(first, 'a', 60);
  await tick(15);
  await Promise.all([a, section(second, 'b', 1)]);
  return log;
}

describe.each(engines)('entity locks on $name', (engine) => {
  let e: OpenedEngine;
  afterEach(async () => {
    await e?.close();
  });

  it('runs sections of one key one after another, in call order', async () => {
    e = await engine.open();
    expect(await overlapping('patient:p', e.stores.locks, e.stores.locks)).toEqual(['a in', 'a out', 'b in', 'b out']);
  });

  it('lets different keys run at once', async () => {
    e = await engine.open();
    let inside = 0;
    let most = 0;
    await Promise.all(
      ['a', 'b', 'c'].map((key) =>
        e.stores.locks.run(key, async () => {
          most = Math.max(most, ++inside);
          // Each section waits (a while at most) for the others to be inside too: a lock that serialised
          // different keys would keep them out, however fast or slow the machine.
          for (let waited = 0; inside < 3 && waited < 2_000; waited += 10) await tick(10);
          inside--;
        }),
      ),
    );
    expect(most).toBe(3);
  });

  it('passes a failure to its caller only and runs the next section', async () => {
    e = await engine.open();
    const failing = e.stores.locks.run('k', async () => {
      throw new Error('EMR down');
    });
    const next = e.stores.locks.run('k', async () => 'ran');
    await expect(failing).rejects.toThrow('EMR down');
    await expect(next).resolves.toBe('ran');
  });
});

describe.each(postgresOnly)('entity locks across replicas on $name', (engine) => {
  let e: OpenedEngine;
  afterEach(async () => {
    await e?.close();
  });

  it('holds a key against another replica until the section ends', async () => {
    e = await engine.open();
    const other = await e.replica!();
    expect(await overlapping('claim:doctor:doc_1', e.stores.locks, other.locks)).toEqual(['a in', 'a out', 'b in', 'b out']);
  });

  it('leaves no lock and no connection behind when a section fails', async () => {
    e = await engine.open();
    const other = await e.replica!();
    await expect(e.stores.locks.run('k', () => Promise.reject(new Error('EMR down')))).rejects.toThrow('EMR down');
    // The other replica takes the key at once, and nothing is left holding an advisory lock.
    await expect(other.locks.run('k', async () => 'ran')).resolves.toBe('ran');
    expect(await e.query("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory'")).toEqual([{ n: 0 }]);
  });
});
