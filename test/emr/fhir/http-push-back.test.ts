// The FHIR client under an EMR that pushes back: a 429 (or a 503 saying when to come back) lowers the calls
// allowed in flight and fails with the wait the EMR asked for, marked as a push-back (the retry rule gives the
// work that time without counting an attempt); the EMR never has more calls in flight than the limit allows.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/clock.ts';
import { EmrError } from '../../../src/emr/errors.ts';
import { createFhirHttp } from '../../../src/emr/fhir/http.ts';
import { createAdaptiveLimit } from '../../../src/work/adaptive-limit.ts';

/** A server that answers each request with the next of `answers` (the last one again once they run out). */
async function scriptedServer(answers: { status: number; headers?: Record<string, string> }[]) {
  let requests = 0;
  let inFlight = 0;
  let most = 0;
  const server: Server = createServer((req, res) => {
    const answer = answers[Math.min(requests++, answers.length - 1)]!;
    inFlight++;
    most = Math.max(most, inFlight);
    req.resume();
    req.on('end', () =>
      setTimeout(() => {
        inFlight--;
        res.writeHead(answer.status, { 'content-type': 'application/fhir+json', ...answer.headers }).end('{"resourceType":"Patient","id":"1"}');
      }, 5),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    most: () => most,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function clientOf(answers: Parameters<typeof scriptedServer>[0], max = 8) {
  const server = await scriptedServer(answers);
  const limit = createAdaptiveLimit({ max, clock: systemClock });
  const http = createFhirHttp({ baseUrl: server.url, timeoutMs: 5_000, auth: { mode: 'none' }, clock: systemClock, maxContentBytes: 1_000_000, limit });
  cleanups.push(
    () => server.close(),
    () => http.close(),
  );
  return { server, limit, http };
}

describe('FHIR client under push-back', () => {
  it('fails a call the EMR answered 429 with the wait it asked for, as a push-back, and halves the calls allowed', async () => {
    const { server, limit, http } = await clientOf([{ status: 429, headers: { 'retry-after': '2' } }, { status: 201 }]);
    const err = await http.call('POST', 'Patient', { resourceType: 'Patient' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmrError);
    expect(err).toMatchObject({ code: 'emr_unavailable', httpStatus: 429, retryAfterMs: 2_000, pushedBack: true });
    expect(server.requests()).toBe(1);
    expect(limit.limit()).toBe(4);
  });

  it('treats a 503 that says when to come back as a push-back, and one that does not as an outage', async () => {
    const said = await clientOf([{ status: 503, headers: { 'retry-after': '1' } }]);
    await expect(said.http.call('GET', 'Patient/1')).rejects.toMatchObject({ httpStatus: 503, pushedBack: true });
    expect(said.limit.limit()).toBe(4);
    const silent = await clientOf([{ status: 503 }]);
    await expect(silent.http.call('GET', 'Patient/1')).rejects.toMatchObject({ httpStatus: 503, pushedBack: false });
    expect(silent.limit.limit()).toBe(8);
  });

  it('never has more calls in flight at the EMR than the limit allows', async () => {
    const { server, http } = await clientOf([{ status: 200 }], 3);
    await Promise.all(Array.from({ length: 12 }, (_, i) => http.call('GET', `Patient/${i}`)));
    expect(server.requests()).toBe(12);
    expect(server.most()).toBe(3);
  });
});
