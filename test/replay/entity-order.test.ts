// Replay keeps each entity's events in file order, each sent only once the one before was answered, however
// slowly the receiver answers; different entities still go at once. Shown with the repository's samples
// against a receiver stub that holds back the first event of every entity.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.ts';
import { SAMPLES_DIR } from '../../src/paths.ts';
import { entityChains } from '../../src/replay/entity-chains.ts';
import { runReplay } from '../../src/replay/replay.ts';
import { loadSamples } from '../../src/replay/samples.ts';

const PATHS = [join(SAMPLES_DIR, 'events'), join(SAMPLES_DIR, 'cases')];

/** The entity an event belongs to, read plainly from its body (not with the code under test). */
function entityOf(body: Record<string, unknown> | undefined): string | undefined {
  const id = (k: string, f: string) => (body?.[k] as Record<string, unknown> | undefined)?.[f];
  const key =
    id('appointment', 'serviceId') ?? (body?.eventType === 'patient.created' ? id('patient', 'serviceId') : undefined) ?? id('document', 'externalId');
  return typeof key === 'string' ? key : undefined;
}

const parse = (text: string): Record<string, unknown> | undefined => {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
};

let stub: Awaited<ReturnType<typeof startStub>>;
beforeAll(async () => {
  stub = await startStub();
});
afterAll(async () => stub?.close());

/** Records each event when it takes it; the first event of every entity is taken only after 60 ms. */
async function startStub() {
  const taken = new Map<string, string[]>();
  const open = new Map<string, number>();
  let inFlight = 0;
  let maxInFlight = 0;
  let overlaps = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = parse(Buffer.concat(chunks).toString());
      const entity = entityOf(body) ?? `unknown:${String(req.headers['x-service-event-id'])}`;
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      if (open.get(entity)) overlaps++;
      open.set(entity, (open.get(entity) ?? 0) + 1);
      const first = !taken.has(entity);
      if (first) taken.set(entity, []);
      setTimeout(
        () => {
          taken.get(entity)!.push(String(req.headers['x-service-event-id']));
          open.set(entity, open.get(entity)! - 1);
          inFlight--;
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"duplicate":false}');
        },
        first ? 60 : 0,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/service`,
    taken,
    stats: () => ({ maxInFlight, overlaps }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe('replay order', () => {
  it("sends each entity's events in file order, one at a time, and different entities at once", async () => {
    await runReplay({ paths: PATHS, to: stub.url, secrets: ['whsec_test'], keyId: 'key_test', concurrency: 4, out: () => undefined, clock: systemClock });

    // What the files say, in file order: every delivery of every sample, grouped by entity.
    const expected = new Map<string, string[]>();
    for (const sample of loadSamples(PATHS))
      for (const step of sample.steps) {
        const entity = entityOf(step.body);
        if (entity) expected.set(entity, [...(expected.get(entity) ?? []), String(step.body!.eventId)]);
      }
    expect(expected.get('apt_s100')?.length, 'the samples tell one appointment in several files').toBeGreaterThanOrEqual(4);
    for (const [entity, eventIds] of expected) expect(stub.taken.get(entity), entity).toEqual(eventIds);
    expect(stub.stats().overlaps).toBe(0);
    expect(stub.stats().maxInFlight).toBeGreaterThan(1);
  });

  it("chains one entity's samples in file order, a body with no entity on its own, every sample once", () => {
    const samples = loadSamples(PATHS, SAMPLES_DIR);
    const chains = entityChains(samples).map((chain) => chain.map((s) => s.name));
    const apt = ['01-appointment-created', '02-appointment-rescheduled', '03-appointment-payment-updated', '04-appointment-completed'];
    expect(chains).toContainEqual(apt.map((n) => join('events', `${n}.json`)));
    expect(chains).toContainEqual([join('cases', 'malformed-body.json')]);
    expect(chains.flat().sort()).toEqual(samples.map((s) => s.name).sort());
  });
});
