// A receiver slow to answer while the simulator's clock jumps by hours: every delivery it takes carries a
// timestamp within its tolerance of the simulator's clock at that moment, the ones it reaches after their 10 s
// included (they count as failed, as the interface says, and go again on their rung).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock, createOffsetClock } from '../../src/clock.ts';
import { DEFAULT_TOLERANCE_SECONDS, WEBHOOK_TIMEOUT_MS } from '../../src/contract/api.ts';
import { silentLogger } from '../../src/logger.ts';
import { verifyWebhook } from '../../src/signature/webhook-signature.ts';
import { createSimulator, type Simulator } from '../../src/simulator/simulator.ts';

interface Sub {
  id: string;
  keyId: string;
  signingSecret: string;
}

interface Taken {
  attempt: number;
  /** Real time it waited in the receiver's queue before being taken. */
  queuedMs: number;
  /** The receiver's verdict on it, checked against the simulator's clock when taken ('valid' or why not). */
  verdict: string;
}

/**
 * A receiver that takes one request at a time, as a single busy worker does, and holds each 200-500 ms before
 * answering. It checks a request's signature and timestamp when it takes it, against the simulator's clock (the
 * clock a bundled adapter runs on), with the adapter's tolerance; attempts up to `failUpTo` answer 500.
 */
async function slowReceiver(sim: Simulator, subs: () => Sub[], failUpTo: number) {
  const taken: Taken[] = [];
  const queue: { req: IncomingMessage; res: ServerResponse; body: Buffer; at: number }[] = [];
  let busy = false;
  const takeNext = () => {
    const next = busy ? undefined : queue.shift();
    if (!next) return;
    busy = true;
    const attempt = Number(next.req.headers['x-service-delivery-attempt']);
    taken.push({ attempt, queuedMs: performance.now() - next.at, verdict: verdict(sim, subs(), next.req, next.body) });
    setTimeout(
      () => {
        next.res.writeHead(attempt <= failUpTo ? 500 : 200).end();
        busy = false;
        takeNext();
      },
      200 + Math.random() * 300,
    );
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      queue.push({ req, res, body: Buffer.concat(chunks), at: performance.now() });
      takeNext();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    taken,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function verdict(sim: Simulator, subs: Sub[], req: IncomingMessage, body: Buffer): string {
  const sub = subs.find((s) => s.keyId === req.headers['x-service-key']);
  if (!sub) return 'unknown key';
  try {
    const nowMs = sim.clock.now();
    verifyWebhook({ body, headers: req.headers, secrets: [sub.signingSecret], keyId: sub.keyId, toleranceSeconds: DEFAULT_TOLERANCE_SECONDS, nowMs });
    return 'valid';
  } catch (err) {
    const ageSeconds = Math.floor(sim.clock.now() / 1000) - Number(req.headers['x-service-timestamp']);
    return `${(err as { reason?: string }).reason ?? (err as Error).message}, signed ${ageSeconds} s before the simulator's clock`;
  }
}

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

describe('a receiver slow to answer while the clock jumps', () => {
  it('gets every attempt, the ones it reaches after their timeout included, signed within its tolerance', async () => {
    // Real time stands still for the simulator, so each rung's attempts fall due together and are all in flight at
    // once: 36 of them, which the receiver takes one at a time, so the last ones wait more than their 10 s.
    const clock = createOffsetClock(createManualClock(Date.parse('2026-01-15T12:00:00.000Z')));
    const sim = createSimulator({ clock, logger: silentLogger() });
    const subs: Sub[] = [];
    // Each delivery's first three attempts fail; a fourth the receiver reaches too late fails too, and the fifth is an hour on.
    const receiver = await slowReceiver(sim, () => subs, 3);
    cleanup = async () => {
      await sim.stop();
      await receiver.close();
    };
    const http = () => request(sim.app.callback());
    const { clinicId } = (await http().post('/_sim/clinics').send({})).body as { clinicId: string };
    // Three subscriptions of 12 appointments each: 36 failures in a row, short of the 50 that pause one.
    for (let i = 0; i < 3; i++)
      subs.push(
        (
          await http()
            .post('/_sim/subscriptions')
            .send({ clinicId, url: receiver.url, eventTypes: ['appointment.created'] })
            .expect(201)
        ).body as Sub,
      );
    for (let i = 0; i < 12; i++) await http().post('/_sim/appointments').send({ clinicId }).expect(201);

    // Advances of about an hour while retries are due: the first fires attempts 1 to 4 (at 0, 30, 150 and 750 s),
    // the next the fifth attempts of those whose fourth the receiver reached too late.
    for (const seconds of [3590, 3610, 3600]) await http().post('/_sim/clock/advance').send({ seconds }).expect(200);

    const stale = receiver.taken.filter((t) => t.verdict !== 'valid').map((t) => `attempt ${t.attempt}: ${t.verdict}`);
    expect(stale).toEqual([]);
    // The case arose: requests waited in the receiver's queue past their timeout, and those failed and went again.
    expect(receiver.taken.filter((t) => t.queuedMs > WEBHOOK_TIMEOUT_MS).length).toBeGreaterThan(0);
    const log = (await http().get('/_sim/deliveries')).body as {
      subscriptionId: string;
      eventId: string;
      attempt: number;
      statusCode: number | null;
      error: string | null;
    }[];
    expect(log.some((d) => d.attempt === 4 && d.error === 'UND_ERR_HEADERS_TIMEOUT')).toBe(true);
    expect(log.some((d) => d.attempt === 5 && d.statusCode === 200)).toBe(true);
    const delivered = new Set(log.filter((d) => d.statusCode === 200).map((d) => `${d.subscriptionId} ${d.eventId}`));
    expect(delivered.size).toBe(36);
    expect(receiver.taken).toHaveLength(log.length);
  }, 120_000);
});

describe('stopping while a receiver holds a request', () => {
  it('cuts the request off at once rather than wait for an answer that may never come', async () => {
    const clock = createOffsetClock(createManualClock(Date.parse('2026-01-15T12:00:00.000Z')));
    const sim = createSimulator({ clock, logger: silentLogger() });
    const held: ServerResponse[] = [];
    const hanging = createServer((req, res) => {
      req.resume();
      held.push(res);
    });
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', () => resolve()));
    let stopping: Promise<void> | undefined;
    const stop = () => (stopping ??= sim.stop());
    cleanup = async () => {
      await stop();
      await new Promise<void>((resolve) => {
        hanging.close(() => resolve());
        hanging.closeAllConnections();
      });
    };
    const http = () => request(sim.app.callback());
    const { clinicId } = (await http().post('/_sim/clinics').send({})).body as { clinicId: string };
    await http()
      .post('/_sim/subscriptions')
      .send({ clinicId, url: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/hook` })
      .expect(201);
    await http().post('/_sim/patients').send({ clinicId }).expect(201);
    const pass = sim.runDue();
    while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));

    const started = performance.now();
    await stop();
    expect(performance.now() - started).toBeLessThan(WEBHOOK_TIMEOUT_MS / 2);
    await pass;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(held[0]!.destroyed).toBe(true);
  });
});
