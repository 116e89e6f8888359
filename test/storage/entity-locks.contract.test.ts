// Entity locks on every engine: sections of one key one after another, keys independent, a failure passed to
// its caller only, several keys held at once (runAll) against a section of any of them; on PostgreSQL also
// across replicas (two pools on one database) and without a connection left behind.
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

  it('holds every key of a runAll section at once: a section of any of them waits for it, one of another key does not', async () => {
    e = await engine.open();
    const locks = e.stores.locks;
    const log: string[] = [];
    const all = locks.runAll(['patient:p', 'claim:doctor:d', 'claim:patient:p'], async () => {
      log.push('all in');
      await tick(40);
      log.push('all out');
    });
    await tick(10);
    const one = locks.run('claim:doctor:d', async () => void log.push('doctor'));
    const other = locks.run('claim:location:l', async () => void log.push('location'));
    await Promise.all([all, one, other]);
    expect(log.indexOf('doctor')).toBeGreaterThan(log.indexOf('all out'));
    expect(log.indexOf('location')).toBeLessThan(log.indexOf('all out'));
    // Sections of several keys given in one order never wait for each other in a ring.
    const overlapping = ['a', 'b', 'c'].map((k, i) => locks.runAll([`patient:${k}`, 'claim:x', `claim:y${i % 2}`], async () => tick(5)));
    await expect(Promise.all(overlapping)).resolves.toHaveLength(3);
  });
});

describe.each(postgresOnly)('entity locks across replicas on $name', (engine) => {
  let e: OpenedEngine;
  afterEach(async () => {
    await e?.close();
  });
  /** The advisory locks granted now, and on how many connections. */
  const advisoryHeld = () =>
    e.query<{ n: number; connections: number }>(
      "SELECT count(*) AS n, count(DISTINCT pid) AS connections FROM pg_locks WHERE locktype = 'advisory' AND granted",
    );

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

  it('holds the keys of a runAll section against another replica, on one connection, and lets them all go', async () => {
    e = await engine.open();
    const other = await e.replica!();
    const log: string[] = [];
    const all = e.stores.locks.runAll(['patient:p', 'claim:doctor:d', 'claim:location:l'], async () => {
      const held = await advisoryHeld();
      log.push(`all in: ${JSON.stringify(held)}`);
      await tick(60);
      log.push('all out');
    });
    await tick(20);
    await Promise.all([all, other.locks.run('claim:location:l', async () => void log.push('other replica'))]);
    expect(log).toEqual(['all in: [{"n":3,"connections":1}]', 'all out', 'other replica']);
    expect(await e.query("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory'")).toEqual([{ n: 0 }]);
  });

  it("takes the key of a section inside another on the outer section's connection, held against another replica", async () => {
    e = await engine.open();
    const other = await e.replica!();
    const log: string[] = [];
    const nested = e.stores.locks.run('patient:p', () =>
      e.stores.locks.run('claim:patient:p', async () => {
        const held = await advisoryHeld();
        log.push(`inner in: ${JSON.stringify(held)}`);
        await tick(60);
        log.push('inner out');
      }),
    );
    await tick(20);
    await Promise.all([nested, other.locks.run('claim:patient:p', async () => void log.push('other replica'))]);
    expect(log).toEqual(['inner in: [{"n":2,"connections":1}]', 'inner out', 'other replica']);
    expect(await e.query("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory'")).toEqual([{ n: 0 }]);
  });
});
