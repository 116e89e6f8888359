// The neighbours' readiness probes: a result reused for a while on the injected clock, concurrent callers
// sharing one probe, a slow probe failing at its timeout; the service's base address reachable when it
// answers anything but a transient status, and not when nothing answers.
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { cachedProbe, createReachability } from '../../src/status/readiness-probes.ts';
import { freePort } from '../support/stack.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('cachedProbe', () => {
  it('reuses a result until cacheMs has passed on the injected clock, then asks again', async () => {
    const clock = createManualClock();
    let calls = 0;
    let failing = false;
    const check = cachedProbe(
      async () => {
        calls++;
        if (failing) throw new Error('down');
      },
      { clock, timeoutMs: 1_000, cacheMs: 5_000 },
    );
    expect(await check()).toBe(true);
    failing = true;
    clock.advance(4_999);
    expect(await check()).toBe(true);
    expect(calls).toBe(1);
    clock.advance(1);
    expect(await check()).toBe(false);
    expect(calls).toBe(2);
  });

  it('lets concurrent callers share one probe, and counts a probe slower than timeoutMs as failing', async () => {
    let calls = 0;
    const check = cachedProbe(
      () => {
        calls++;
        return new Promise(() => {});
      },
      { clock: createManualClock(), timeoutMs: 50, cacheMs: 5_000 },
    );
    const started = performance.now();
    expect(await Promise.all([check(), check(), check()])).toEqual([false, false, false]);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(calls).toBe(1);
  });
});

describe('createReachability', () => {
  async function answering(status: number): Promise<string> {
    const server: Server = createServer((_req, res) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(
      () =>
        new Promise<void>((r) => {
          server.close(() => r());
          server.closeAllConnections();
        }),
    );
    return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  }

  it('counts any answer but a transient one as reachable (a 401 or 404 is the service answering)', async () => {
    for (const status of [200, 401, 404]) {
      const r = createReachability(await answering(status), 1_000);
      cleanups.push(() => r.close());
      await expect(r.check()).resolves.toBeUndefined();
    }
    for (const status of [503, 429]) {
      const r = createReachability(await answering(status), 1_000);
      cleanups.push(() => r.close());
      await expect(r.check()).rejects.toThrow(String(status));
    }
  });

  it('is not reachable when nothing listens at the address', async () => {
    const r = createReachability(`http://127.0.0.1:${await freePort()}`, 1_000);
    cleanups.push(() => r.close());
    await expect(r.check()).rejects.toThrow();
  });
});
