// The per-entity sections of the processor inside one process (SQLite's entity locks): one at a time per key,
// keys independent, failures contained. Across replicas: test/storage/entity-locks.contract.test.ts.
import { describe, expect, it } from 'vitest';
import { createSqliteEntityLocks } from '../../src/storage/sqlite/entity-locks.ts';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('entity locks', () => {
  it('runs sections of one key one after another, in call order', async () => {
    const locks = createSqliteEntityLocks();
    const log: string[] = [];
    const section = (name: string, ms: number) =>
      locks.run('k', async () => {
        log.push(`${name} in`);
        await tick(ms);
        log.push(`${name} out`);
      });
    await Promise.all([section('a', 10), section('b', 1)]);
    expect(log).toEqual(['a in', 'a out', 'b in', 'b out']);
    expect(locks.held()).toBe(0);
  });

  it('lets different keys run at once', async () => {
    const locks = createSqliteEntityLocks();
    let inside = 0;
    let most = 0;
    const section = (key: string) =>
      locks.run(key, async () => {
        most = Math.max(most, ++inside);
        await tick(5);
        inside--;
      });
    await Promise.all([section('a'), section('b'), section('c')]);
    expect(most).toBe(3);
  });

  it('passes a failure to its caller only and runs the next section', async () => {
    const locks = createSqliteEntityLocks();
    const failing = locks.run('k', async () => {
      throw new Error('EMR down');
    });
    const next = locks.run('k', async () => 'ran');
    await expect(failing).rejects.toThrow('EMR down');
    await expect(next).resolves.toBe('ran');
  });
});
