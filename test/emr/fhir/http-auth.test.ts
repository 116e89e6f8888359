// The FHIR client's sign-in: SMART against the real bundled FHIR server (a revoked token renewed once, a
// removed client or a missing scope an incident), static bearer and none against a stub, and document contents.
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createManualClock } from '../../../src/clock.ts';
import { EmrError } from '../../../src/emr/errors.ts';
import type { FhirAuthSettings } from '../../../src/emr/fhir/auth/index.ts';
import { jwksOf, loadClientKey, type ClientKey } from '../../../src/emr/fhir/auth/keys.ts';
import { createFhirHttp, type FhirHttp } from '../../../src/emr/fhir/http.ts';
import { startFhirServer, type RunningFhirServer } from '../../../src/fhir-server/server.ts';
import { silentLogger } from '../../../src/logger.ts';

const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-http-auth-'));
const clock = createManualClock();
let fhir: RunningFhirServer;
let key: ClientKey;

beforeAll(async () => {
  fhir = await startFhirServer({ logger: silentLogger(), clock, auth: {} });
  const path = join(dir, 'client-key.pem');
  writeFileSync(path, generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  key = await loadClientKey(path);
});
afterAll(async () => {
  await fhir.close();
  rmSync(dir, { recursive: true, force: true });
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

function httpFor(baseUrl: string, auth: FhirAuthSettings, maxContentBytes = 1024 * 1024): FhirHttp {
  const http = createFhirHttp({ baseUrl, timeoutMs: 5_000, auth, clock, maxContentBytes });
  cleanups.push(() => http.close());
  return http;
}

let clients = 0;
/** A client of its own registered with the bundled server (allowed `allowed`, or every system scope), and a FHIR client signing in as it. */
function signedIn(o: { allowed?: string[]; scopes?: string[]; maxContentBytes?: number } = {}): { http: FhirHttp; clientId: string } {
  const clientId = `bridge-${++clients}`;
  fhir.auth!.registerClient({ clientId, jwks: jwksOf(key.publicJwk), ...(o.allowed ? { scopes: o.allowed } : {}) });
  const http = httpFor(fhir.baseUrl, { mode: 'smart', clientId, key, scopes: o.scopes ?? ['system/*.cruds'] }, o.maxContentBytes);
  return { http, clientId };
}

async function failure(p: Promise<unknown>): Promise<EmrError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EmrError);
  return err as EmrError;
}

interface Stub {
  url: string;
  seen: { method: string; url: string; headers: IncomingHttpHeaders }[];
  /** The status every request is answered with. */
  status: number;
}

async function startStub(): Promise<Stub> {
  const stub: Stub = { url: '', seen: [], status: 200 };
  const server: Server = createServer((req, res) => {
    stub.seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    req.resume();
    req.on('end', () => {
      res.writeHead(stub.status, { 'content-type': 'application/fhir+json' });
      res.end(JSON.stringify(stub.status < 400 ? { resourceType: 'Bundle', type: 'searchset', total: 0 } : { resourceType: 'OperationOutcome', issue: [] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  stub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return stub;
}

const PATIENT = { resourceType: 'Patient', name: [{ text: 'Sign-in Test' }] };

describe('SMART sign-in against the bundled FHIR server', () => {
  it('signs in and works, with one token for several calls', async () => {
    const { http } = signedIn();
    const created = await http.call<{ id: string }>('POST', 'Patient', PATIENT);
    expect(created.status).toBe(201);
    const read = await http.call<{ id: string; name: { text: string }[] }>('GET', `Patient/${created.body.id}`);
    expect(read.body.name[0]!.text).toBe('Sign-in Test');
    expect(http.auth.tokens!.requests()).toBe(1);
  });

  it('renews a revoked token once and retries the call', async () => {
    const { http } = signedIn();
    await http.call('GET', 'Patient?_count=1');
    const before = http.auth.tokens!.requests();
    fhir.auth!.revokeTokens();
    const again = await http.call<{ resourceType: string }>('GET', 'Patient?_count=1');
    expect(again.body.resourceType).toBe('Bundle');
    expect(http.auth.tokens!.requests()).toBe(before + 1);
    await http.call('GET', 'Patient?_count=1');
    expect(http.auth.tokens!.requests()).toBe(before + 1);
  });

  it('fails with an emr_unauthorized incident once its client is removed', async () => {
    const { http, clientId } = signedIn();
    await http.call('GET', 'Patient?_count=1');
    fhir.auth!.removeClient(clientId);
    const err = await failure(http.call('GET', 'Patient?_count=1'));
    expect(err.code).toBe('emr_unauthorized');
    expect(err.incident).toBe(true);
    expect(err.message).toContain('invalid_client');
  });

  it('gets a token for system/Patient.rs alone, reads with it, and a POST Patient answered 403 with a fresh token too is emr_unauthorized', async () => {
    const { http } = signedIn({ allowed: ['system/Patient.rs'], scopes: ['system/Patient.rs'] });
    const search = await http.call<{ resourceType: string }>('GET', 'Patient?_count=1');
    expect(search.body.resourceType).toBe('Bundle');
    const err = await failure(http.call('POST', 'Patient', PATIENT));
    expect(err.code).toBe('emr_unauthorized');
    expect(err.incident).toBe(true);
    expect(err.httpStatus).toBe(403);
    expect(err.message).toContain('with a fresh token');
    // The 403 got one fresh token (a scope granted since would be in it), and one retry: no more.
    expect(http.auth.tokens!.requests()).toBe(2);
  });
});

describe('static bearer and no sign-in', () => {
  it("sends 'Authorization: Bearer <token>' exactly", async () => {
    const stub = await startStub();
    const http = httpFor(stub.url, { mode: 'bearer', token: 'static-token-0123' });
    await http.call('GET', 'Patient?_count=1');
    expect(stub.seen).toHaveLength(1);
    expect(stub.seen[0]!.headers.authorization).toBe('Bearer static-token-0123');
  });

  it('does not retry a 401 with a static bearer token, and calls it emr_unauthorized', async () => {
    const stub = await startStub();
    stub.status = 401;
    const http = httpFor(stub.url, { mode: 'bearer', token: 'static-token-0123' });
    const err = await failure(http.call('GET', 'Patient?_count=1'));
    expect(err.code).toBe('emr_unauthorized');
    expect(err.incident).toBe(true);
    expect(stub.seen).toHaveLength(1);
  });

  it("sends no Authorization header in mode 'none'", async () => {
    const stub = await startStub();
    const http = httpFor(stub.url, { mode: 'none' });
    await http.call('GET', 'Patient?_count=1');
    expect(stub.seen).toHaveLength(1);
    expect(stub.seen[0]!.headers).not.toHaveProperty('authorization');
  });
});

describe('document contents', () => {
  const bytes = Buffer.from('%PDF-1.4\n% a synthetic document for the sign-in tests\n%%EOF\n');

  async function createBinary(http: FhirHttp, content: Buffer): Promise<string> {
    const created = await http.call<{ id: string }>('POST', 'Binary', {
      resourceType: 'Binary',
      contentType: 'application/pdf',
      data: content.toString('base64'),
    });
    return created.body.id;
  }

  it('refuses an attachment URL on another origin without sending it a request', async () => {
    const other = await startStub();
    const { http } = signedIn();
    const err = await failure(http.fetchBytes(`${other.url}/Binary/elsewhere`));
    expect(err.code).toBe('document_content_refused');
    expect(err.retryable).toBe(false);
    expect(other.seen).toHaveLength(0);
  });

  it('reads a relative Binary/<id> signed in, as its bytes', async () => {
    const { http } = signedIn();
    const id = await createBinary(http, bytes);
    expect(Buffer.from(await http.fetchBytes(`Binary/${id}`))).toEqual(bytes);
    expect(Buffer.from(await http.fetchBytes(`${fhir.baseUrl}/Binary/${id}`))).toEqual(bytes);
    expect(http.auth.tokens!.requests()).toBe(1);
  });

  it('refuses content larger than maxContentBytes', async () => {
    const { http } = signedIn({ maxContentBytes: 1024 });
    const id = await createBinary(http, Buffer.alloc(4096, 0x41));
    const err = await failure(http.fetchBytes(`Binary/${id}`));
    expect(err.code).toBe('document_content_refused');
    expect(await http.call('GET', 'Patient?_count=1')).toMatchObject({ status: 200 });
  });
});
