// Signing under a moving clock: however often the simulator's clock is advanced (overlapping calls, the
// dispatch loop running, retries in flight, a subscription pausing mid-pass), every attempt carries the
// simulator time at which its receiver gets to it.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock, createOffsetClock } from '../../src/clock.ts';
import { silentLogger } from '../../src/logger.ts';
import { createSimulator, type Simulator } from '../../src/simulator/simulator.ts';
import { waitFor } from '../support/wait.ts';

interface Handled {
  eventId: string;
  attempt: number;
  signedAtMs: number;
  simNowMs: number;
}

/**
 * A receiver that takes one request at a time, as a busy single worker does: each waits its turn, then the
 * receiver reads the simulator's clock (where a real one checks the timestamp) and answers. It fails the
 * first `failFirst` attempts of every event, and can be told to stop taking requests after some number.
 */
async function oneAtATimeReceiver(sim: Simulator, failFirst: number) {
  const handled: Handled[] = [];
  const waiting: [IncomingMessage, ServerResponse][] = [];
  let busy = false;
  let takeUpTo = Infinity;
  const takeNext = () => {
    if (busy || handled.length >= takeUpTo) return;
    const next = waiting.shift();
    if (!next) return;
    busy = true;
    const [req, res] = next;
    setTimeout(() => {
      const attempt = Number(req.headers['x-service-delivery-attempt']);
      handled.push({
        eventId: String(req.headers['x-service-event-id']),
        attempt,
        signedAtMs: Number(req.headers['x-service-timestamp']) * 1000,
        simNowMs: sim.clock.now(),
      });
      res.writeHead(attempt <= failFirst ? 500 : 200).end();
      busy = false;
      takeNext();
    }, 1);
  };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      waiting.push([req, res]);
      takeNext();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    handled,
    stopAfter(n: number) {
      takeUpTo = n;
    },
    takeAll() {
      takeUpTo = Infinity;
      takeNext();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function setUp(failFirst: number, dispatchIntervalMs?: number) {
  const clock = createOffsetClock(createManualClock(Date.parse('2026-01-15T12:00:00.000Z')));
  const sim = createSimulator({ clock, logger: silentLogger(), ...(dispatchIntervalMs ? { dispatchIntervalMs } : {}) });
  const receiver = await oneAtATimeReceiver(sim, failFirst);
  cleanup = async () => {
    await sim.stop();
    await receiver.close();
  };
  const http = () => request(sim.app.callback());
  const { clinicId } = (await http().post('/_sim/clinics').send({})).body as { clinicId: string };
  const sub = (await http().post('/_sim/subscriptions').send({ clinicId, url: receiver.url })).body as { id: string };
  return { sim, receiver, http, clinicId, subscriptionId: sub.id };
}

// The timestamp has whole seconds: up to a second of rounding, nothing of a race.
const expectSignedWhenHandled = (handled: Handled[]) => {
  for (const h of handled) expect(h.simNowMs - h.signedAtMs, `attempt ${h.attempt} of ${h.eventId}`).toBeLessThan(1_000);
};

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

describe('the simulator clock under advances', () => {
  it('signs every attempt, retries included, with the time at which it is received while advances overlap', async () => {
    const { sim, receiver, http, clinicId, subscriptionId } = await setUp(4, 1);
    sim.start();
    // A hundred advances arrive, each without waiting for the one before, while the dispatch loop runs and events
    // are made whose first attempts all fail (so many in a row that the subscription pauses).
    const calls: Promise<unknown>[] = [];
    const burst = (async () => {
      for (let i = 0; i < 100; i++) {
        calls.push(
          http()
            .post('/_sim/clock/advance')
            .send({ seconds: [7, 29, 121, 3600][i % 4] })
            .expect(200),
        );
        await new Promise((resolve) => setTimeout(resolve, 3));
      }
    })();
    await Promise.all([
      ...Array.from({ length: 60 }, () => http().post('/_sim/patients').send({ clinicId }).expect(201)),
      ...Array.from({ length: 20 }, async () => {
        const apt = await http().post('/_sim/appointments').send({ clinicId }).expect(201);
        await http().post(`/_sim/appointments/${apt.body.serviceId}/cancel`).expect(200);
      }),
    ]);
    await burst;
    await Promise.all(calls);

    // The rest of the ladder, resuming whenever failures in a row paused the subscription again, until all 120
    // events are through: 60 patients, 20 appointments with a patient made for each, and their cancellations
    // (each waits for its appointment's creation, then fails its own first attempts).
    const delivered = () => new Set(receiver.handled.filter((h) => h.attempt === 5).map((h) => h.eventId)).size;
    await waitFor(
      async () => {
        await http().post(`/_sim/subscriptions/${subscriptionId}/resume`).expect(200);
        await Promise.all([http().post('/_sim/clock/advance').send({ seconds: 3600 }), http().post('/_sim/clock/advance').send({ seconds: 600 })]);
        return delivered() === 120 || undefined;
      },
      20_000,
      0,
    );
    expect(new Set(receiver.handled.map((h) => h.eventId)).size).toBe(120);
    expect(((await http().get('/_sim/alerts')).body as { kind: string }[]).some((a) => a.kind === 'subscription_paused')).toBe(true);
    expectSignedWhenHandled(receiver.handled);
  }, 60_000);

  it('keeps the whole ladder on time while advances overlap attempts held at a subscription that paused mid-pass', async () => {
    const { sim, receiver, http, clinicId, subscriptionId } = await setUp(4);
    for (let i = 0; i < 60; i++) await http().post('/_sim/patients').send({ clinicId }).expect(201);
    const processed = async () => ((await http().get('/_sim/deliveries')).body as unknown[]).length;
    // On each rung an advance makes the 60 attempts due there. Until the last rung 50 of them fail in a row and
    // pause the subscription; while the pass's last attempts still wait at the receiver, another advance comes.
    for (const rung of [0, 30, 120, 600, 3600]) {
      const seen = receiver.handled.length;
      receiver.stopAfter(seen + 55);
      const firing = sim.advance(rung * 1000);
      await waitFor(async () => (await processed()) === seen + 55 || undefined);
      const overlapping = sim.advance(15_000);
      receiver.takeAll();
      await Promise.all([firing, overlapping]);
      await http().post(`/_sim/subscriptions/${subscriptionId}/resume`).expect(200);
    }
    expect(receiver.handled).toHaveLength(300);
    expect(new Set(receiver.handled.filter((h) => h.attempt === 5).map((h) => h.eventId)).size).toBe(60);
    expectSignedWhenHandled(receiver.handled);
    // Each attempt went on its own rung of the ladder, the overlapping advances notwithstanding.
    const t0 = Date.parse('2026-01-15T12:00:00.000Z');
    expect(new Set(receiver.handled.map((h) => `attempt ${h.attempt} at +${(h.signedAtMs - t0) / 1000} s`))).toEqual(
      new Set(['attempt 1 at +0 s', 'attempt 2 at +30 s', 'attempt 3 at +150 s', 'attempt 4 at +750 s', 'attempt 5 at +4350 s']),
    );
  });
});
