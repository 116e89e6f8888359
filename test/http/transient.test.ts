// The one rule for transient HTTP answers (src/http/transient.ts), and every client that judges answers
// by it classifying alike: the FHIR client's calls, its document contents and its token endpoint, and the
// service client. A stub answers each request with the status named in its path.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { EmrError } from '../../src/emr/errors.ts';
import { ensureClientKey, type ClientKey } from '../../src/emr/fhir/auth/keys.ts';
import { createFhirHttp, type FhirHttp } from '../../src/emr/fhir/http.ts';
import { isTransientStatus } from '../../src/http/transient.ts';
import { createServiceClient, type ServiceClient } from '../../src/service-client/client.ts';
import { ServiceCallError } from '../../src/service-client/errors.ts';

const TABLE: [status: number, transient: boolean][] = [
  [408, true],
  [429, true],
  [500, true],
  [503, true],
  [400, false],
  [401, false],
  [403, false],
  [404, false],
  [409, false],
  [422, false],
];

const clock = createManualClock();
const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-transient-'));
let server: Server;
let base: string;
let key: ClientKey;
let fhir: FhirHttp;
let service: ServiceClient;

beforeAll(async () => {
  server = createServer((req, res) => {
    const status = Number(/\/(\d{3})(?:\/|$)/.exec(req.url ?? '')?.[1] ?? 200);
    req.resume();
    req.on('end', () => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  key = await ensureClientKey(join(dir, 'client-key.pem'));
  fhir = createFhirHttp({ baseUrl: `${base}/fhir`, timeoutMs: 5_000, auth: { mode: 'none' }, clock, maxContentBytes: 1024 });
  service = createServiceClient({ baseUrl: base, apiKey: 'key', timeoutMs: 5_000, clock });
});
afterAll(async () => {
  await fhir.close();
  await service.close();
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => expect.fail('expected a failure'),
    (e: unknown) => e,
  );
}

/** Transient for the EMR side: `emr_unavailable` (an outage); anything else is a refusal or an incident. */
async function emrTransient(p: Promise<unknown>): Promise<boolean> {
  const err = await rejection(p);
  expect(err).toBeInstanceOf(EmrError);
  return (err as EmrError).code === 'emr_unavailable';
}

describe.each(TABLE)('%i', (status, transient) => {
  it(`is ${transient ? '' : 'not '}transient by the rule`, () => {
    expect(isTransientStatus(status)).toBe(transient);
  });

  it('is classified alike by the FHIR client: calls, document contents and the token endpoint', async () => {
    expect(await emrTransient(fhir.call('GET', `Patient/${status}`))).toBe(transient);
    expect(await emrTransient(fhir.fetchBytes(`Binary/${status}`))).toBe(transient);
    const signIn = createFhirHttp({
      baseUrl: `${base}/fhir`,
      timeoutMs: 5_000,
      auth: { mode: 'smart', clientId: 'bridge', key, tokenUrl: `${base}/token/${status}`, scopes: ['system/Patient.r'] },
      clock,
      maxContentBytes: 1024,
    });
    try {
      expect(await emrTransient(signIn.auth.authorization())).toBe(transient);
    } finally {
      await signIn.close();
    }
  });

  it('is classified alike by the service client', async () => {
    const err = await rejection(service.putMapping('patient', String(status), 'emr-1'));
    expect(err).toBeInstanceOf(ServiceCallError);
    expect((err as ServiceCallError).httpStatus).toBe(status);
    expect((err as ServiceCallError).retryable).toBe(transient);
  });
});
