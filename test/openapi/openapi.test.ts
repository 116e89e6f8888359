// The OpenAPI documents and the routes cannot drift: every route registered on the adapter's and the
// simulator's routers is in its document, every documented operation answers on the running app (never
// route-not-found or method-not-allowed) with a documented status, and each answer's body passes the
// schema the document gives it. The documents are OpenAPI 3.1 shaped, and docs/openapi/ holds what they
// generate now.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Koa from 'koa';
import type Router from '@koa/router';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AppDeps } from '../../src/app/app.ts';
import { adminApi, adminOpenApi } from '../../src/api-docs/admin.ts';
import { errorBodySchema, renderOpenApi, type OpenApiDocument } from '../../src/openapi/build.ts';
import type { RouteDescription } from '../../src/openapi/describe.ts';
import { OPENAPI_DIR, openApiDocuments } from '../../src/api-docs/documents.ts';
import { simulatorControlApi } from '../../src/simulator/openapi/control.ts';
import { simulatorIntegrationApi } from '../../src/simulator/openapi/integration.ts';
import { simulatorOpenApi } from '../../src/simulator/openapi/index.ts';
import { PDF, simulatorFixture } from '../support/simulator-fixture.ts';
import { appointmentEventBody, signedWebhook } from '../support/webhooks.ts';
import { startZeroConfigAdapter } from '../support/zero-config-adapter.ts';

// Every app the adapter builds, with what it was built from: the routers are walked as registered.
const built = vi.hoisted(() => [] as { deps: AppDeps; app: Koa }[]);
vi.mock('../../src/app/app.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/app/app.ts')>();
  return {
    ...real,
    createApp(deps: AppDeps) {
      const app = real.createApp(deps);
      built.push({ deps, app });
      return app;
    },
  };
});

/** What a route-not-found answers (src/http/error-middleware.ts, and the admin catch-all of src/app/app.ts). */
const ROUTE_NOT_FOUND = ['no such route', 'no such admin route'];
/** The catch-all under /admin that answers route-not-found behind the token: a guard, not a route. */
const CATCH_ALL = /\{\*/;

type Operation = `${string} ${string}`;
const op = (method: string, path: string): Operation => `${method.toUpperCase()} ${path}`;

/** Every route on the app's routers (nested ones included, with their prefix), in OpenAPI form; HEAD left out. */
const CONSOLE_PATH = '/console';

function registeredRoutes(app: Koa): Operation[] {
  const out = new Set<Operation>();
  for (const mw of app.middleware) {
    const router = (mw as { router?: Router }).router;
    if (!router) continue;
    for (const layer of router.stack) {
      if (layer.methods.length === 0) continue; // router.use middleware
      if (typeof layer.path !== 'string') throw new Error(`a route by RegExp cannot be documented: ${String(layer.path)}`);
      if (CATCH_ALL.test(layer.path)) continue;
      // The console's HTML pages are a surface of their own (test/console), not part of the JSON API.
      if (layer.path === CONSOLE_PATH || layer.path.startsWith(`${CONSOLE_PATH}/`)) continue;
      const path = layer.path.replace(/:(\w+)/g, '{$1}');
      for (const m of layer.methods) if (m !== 'HEAD') out.add(op(m, path));
    }
  }
  return [...out].sort();
}

function documentedOperations(doc: OpenApiDocument): Operation[] {
  return Object.entries(doc.paths)
    .flatMap(([path, item]) => Object.keys(item).map((m) => op(m, path)))
    .sort();
}

/** OpenAPI 3.1 shape: the version, info, operations with ids and answers, every $ref and security scheme defined. */
function expectOpenApi31(doc: OpenApiDocument): void {
  expect(doc.openapi).toBe('3.1.0');
  expect(doc.info.title).toBeTruthy();
  expect(doc.info.version).toMatch(/^\d+\.\d+\.\d+/);
  expect(Object.keys(doc.paths).length).toBeGreaterThan(0);
  expect(doc.components.schemas.Error).toBeDefined();
  const ids = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths)) {
    expect(path.startsWith('/'), path).toBe(true);
    for (const [method, o] of Object.entries(item)) {
      expect(['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace']).toContain(method);
      const operation = o as {
        operationId: string;
        responses: Record<string, unknown>;
        parameters?: { name: string; in: string; required: boolean }[];
        security?: Record<string, unknown>[];
      };
      expect(ids.has(operation.operationId), operation.operationId).toBe(false);
      ids.add(operation.operationId);
      expect(Object.keys(operation.responses).length, `${method} ${path}`).toBeGreaterThan(0);
      for (const status of Object.keys(operation.responses)) expect(status).toMatch(/^[1-5]\d\d$/);
      for (const name of [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]))
        expect(
          operation.parameters?.some((p) => p.in === 'path' && p.name === name && p.required),
          `${method} ${path}: {${name}}`,
        ).toBe(true);
      for (const requirement of operation.security ?? [])
        for (const scheme of Object.keys(requirement)) expect(doc.components.securitySchemes[scheme]).toBeDefined();
    }
  }
  const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!);
  expect(refs.length).toBeGreaterThan(0);
  for (const r of refs) {
    expect(r.startsWith('#/components/schemas/'), r).toBe(true);
    expect(doc.components.schemas[r.slice('#/components/schemas/'.length)], r).toBeDefined();
  }
}

interface Answer {
  status: number;
  body: unknown;
  type: string;
}

interface Call {
  params: Record<string, string>;
  headers?: Record<string, string>;
  body?: unknown;
  raw?: Buffer;
}

/** Calls every documented operation; checks it answers, with a documented status and a body its schema allows. */
async function expectEveryOperationAnswers(
  doc: OpenApiDocument,
  routes: RouteDescription[],
  send: (method: string, path: string, call: Call) => Promise<Answer>,
  callFor: (route: RouteDescription) => Call,
): Promise<void> {
  const seen: string[] = [];
  for (const operation of documentedOperations(doc)) {
    const [method, path] = operation.split(' ') as [string, string];
    const route = routes.find((r) => r.method === method.toLowerCase() && r.path === path);
    expect(route, `${operation} has no description`).toBeDefined();
    const call = callFor(route!);
    const url = path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
      expect(call.params[name], `${operation}: no value for {${name}}`).toBeDefined();
      return encodeURIComponent(call.params[name]!);
    });
    const res = await send(method, url, call);
    const what = `${operation} → ${res.status} ${JSON.stringify(res.body)?.slice(0, 300)}`;
    // Route-not-found and method-not-allowed: the document names a route the app does not serve.
    expect([405, 501], what).not.toContain(res.status);
    if (res.status === 404) {
      expect(res.body, what).toMatchObject({ error: { code: 'not_found' } });
      expect(ROUTE_NOT_FOUND, what).not.toContain((res.body as { error: { message: string } }).error.message);
    }
    const documented =
      route!.responses[res.status] ??
      (route!.errors?.[res.status] !== undefined ? { description: route!.errors[res.status]!, body: { name: 'Error', schema: errorBodySchema } } : undefined);
    expect(documented, `${what}: status not documented`).toBeDefined();
    const body = documented!.body;
    if (body && 'schema' in body && typeof body.schema === 'object' && body.schema !== null && '_zod' in body.schema) {
      const r = (body.schema as import('zod').ZodType).safeParse(res.body);
      expect(r.success, `${what}: ${JSON.stringify(r.error?.issues)}`).toBe(true);
    } else if (documented!.contentType) {
      expect(res.type, what).toContain(documented!.contentType);
    }
    seen.push(`${operation} ${res.status}`);
  }
  // The walk must have reached handlers, not only guards.
  expect(seen.filter((s) => / 2\d\d$/.test(s)).length).toBeGreaterThan(seen.length / 2);
}

describe('docs/openapi', () => {
  it('holds exactly the documents the descriptions generate (npm run schemas writes them)', () => {
    const docs = openApiDocuments();
    expect(readdirSync(OPENAPI_DIR).sort()).toEqual(Object.keys(docs).sort());
    for (const [name, doc] of Object.entries(docs)) {
      expect(readFileSync(join(OPENAPI_DIR, name), 'utf8'), `docs/openapi/${name} is stale: run npm run schemas`).toBe(renderOpenApi(doc));
    }
  });

  it.each([...Object.entries(openApiDocuments()), ['simulator /openapi.json', simulatorOpenApi()] as const])('%s is an OpenAPI 3.1 document', (_name, doc) => {
    expectOpenApi31(doc);
  });
});

describe('the adapter', () => {
  let zero: Awaited<ReturnType<typeof startZeroConfigAdapter>>;
  let app: Koa;
  let deps: AppDeps;
  const adapterDoc = adminOpenApi();

  beforeAll(async () => {
    built.length = 0;
    zero = await startZeroConfigAdapter();
    expect(built.length).toBe(1); // one listener, surface 'all'
    ({ app, deps } = built[0]!);
  }, 60_000);
  afterAll(async () => zero?.close());

  it('serves its document at /openapi.json without a token', async () => {
    const res = await fetch(`${zero.adapter.url}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.json()).toEqual(JSON.parse(JSON.stringify(adapterDoc)));
  });

  it('serves it where the admin API is: on the admin listener, never on the public one', async () => {
    const publicApp = request((await import('../../src/app/app.ts')).createApp({ ...deps, surface: 'public' }).callback());
    const adminApp = request((await import('../../src/app/app.ts')).createApp({ ...deps, surface: 'admin' }).callback());
    expect((await publicApp.get('/openapi.json')).status).toBe(404);
    expect((await adminApp.get('/openapi.json')).status).toBe(200);
  });

  it('documents every route its routers register, and nothing else', () => {
    const registered = registeredRoutes(app);
    expect(registered).toContain('POST /webhooks/service');
    expect(registered).toContain('GET /admin/status');
    expect(registered).toContain('GET /.well-known/jwks.json');
    expect(documentedOperations(adapterDoc)).toEqual(registered);
  });

  it('answers every documented operation with a documented status and body', async () => {
    const { adapter } = zero;
    const auth = { authorization: `Bearer ${adapter.adminToken}` };
    const externalId = `openapi-${Date.now()}`;
    const labReport = {
      documentType: 'lab_report',
      externalId,
      label: 'Blood count',
      patientPhone: '+15550001111',
      patientName: 'Synthetic Patient',
      file: { base64: PDF.toString('base64'), filename: 'blood.pdf' },
    };
    const event = appointmentEventBody();
    const send = async (method: string, path: string, call: Call): Promise<Answer> => {
      const body = call.raw ?? (call.body === undefined ? undefined : JSON.stringify(call.body));
      const res = await fetch(`${adapter.url}${path}`, {
        method,
        headers: { 'content-type': 'application/json', ...call.headers },
        ...(body === undefined ? {} : { body }),
      });
      const type = res.headers.get('content-type') ?? '';
      return { status: res.status, type, body: type.includes('json') ? await res.json() : await res.text() };
    };
    const callFor = (route: RouteDescription): Call => {
      const params = { eventId: String(event.eventId), entityType: 'patient', serviceId: 'pat_no_such', externalId };
      const headers = route.path.startsWith('/admin/') ? auth : {};
      switch (route.operationId) {
        case 'receiveWebhook': {
          const signed = signedWebhook(Date.now(), { body: event, keyId: adapter.keyId, secrets: adapter.signingSecrets });
          return { params, headers: signed.headers, raw: signed.body };
        }
        case 'pushDocument':
          return { params, headers, body: labReport };
        case 'dismissDeadLetter':
        case 'dismissDeadMapping':
          return { params, headers, body: { reason: 'checked by the OpenAPI test' } };
        case 'replayAllDeadLetters':
          return { params, headers, body: {} };
        case 'mapCrosswalk':
          return { params, headers, body: { emrId: 'no-such-patient' } };
        case 'importCrosswalk':
          return { params, headers: { ...headers, 'content-type': 'text/csv' }, raw: Buffer.from('entityType,serviceId,emrId\n') };
        case 'startEmrDowntime':
          return { params, headers, body: { until: new Date(Date.now() + 3_600_000).toISOString(), reason: 'checked by the OpenAPI test' } };
        default:
          return { params, headers };
      }
    };
    // Ids that exist for the paths: a stored event, a queued document.
    for (const id of ['receiveWebhook', 'pushDocument']) {
      const route = adminApi.routes.find((r) => r.operationId === id)!;
      expect((await send(route.method.toUpperCase(), route.path, callFor(route))).status).toBeLessThan(300);
    }
    await expectEveryOperationAnswers(adapterDoc, adminApi.routes, send, callFor);

    // A route that does not exist answers route-not-found, so the check above tells the two apart.
    expect((await send('GET', '/admin/no-such-route', { params: {}, headers: auth })).body).toMatchObject({
      error: { code: 'not_found', message: 'no such admin route' },
    });
    expect((await send('GET', '/no-such-route', { params: {} })).body).toMatchObject({ error: { code: 'not_found', message: 'no such route' } });
  }, 60_000);
});

describe('the simulator', () => {
  let f: Awaited<ReturnType<typeof simulatorFixture>>;
  const simulatorDoc = simulatorOpenApi();
  const routes = [...simulatorIntegrationApi.routes, ...simulatorControlApi.routes];

  beforeAll(async () => {
    f = await simulatorFixture();
  });
  afterAll(async () => f?.close());

  it('serves its document (integration and control APIs) at /openapi.json', async () => {
    const res = await f.http().get('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(JSON.parse(JSON.stringify(simulatorDoc)));
    // The two documents of docs/openapi/ together are the served one.
    const docs = openApiDocuments();
    expect(documentedOperations(simulatorDoc)).toEqual(
      [...documentedOperations(docs['simulator-integration.json']!), ...documentedOperations(docs['simulator-control.json']!)].sort(),
    );
  });

  it('documents every route its routers register, and nothing else', () => {
    const registered = registeredRoutes(f.sim.app);
    expect(registered).toContain('PUT /integration/v1/mappings/{entityType}/{serviceId}');
    expect(registered).toContain('DELETE /_sim/faults');
    expect(documentedOperations(simulatorDoc)).toEqual(registered);
  });

  it('answers every documented operation with a documented status and body', async () => {
    // Records for the ids in paths: a lab report (sent), a prescription (HELD: auto-send is off for them), an appointment.
    const lab = (await f.api('post', 'lab-reports').send(f.labReport())).body.resource as { externalId: string; patientServiceId: string };
    const held = (await f.api('post', 'prescriptions').send(f.labReport())).body.resource as { serviceId: string; status: string };
    expect(held.status).toBe('HELD');
    const appointment = (await f.http().post('/_sim/appointments').send({ clinicId: f.clinicId })).body as { serviceId: string };

    const send = async (method: string, path: string, call: Call): Promise<Answer> => {
      let req = f.http()[method.toLowerCase() as 'get' | 'post' | 'put' | 'delete'](path);
      for (const [k, v] of Object.entries(call.headers ?? {})) req = req.set(k, v);
      const res = call.body === undefined ? await req : await req.send(call.body as object);
      return { status: res.status, type: res.type, body: res.body };
    };
    const callFor = (route: RouteDescription): Call => {
      const params = {
        id: route.path.startsWith('/_sim/subscriptions') ? f.sub.id : appointment.serviceId,
        serviceId: route.path.startsWith('/_sim/documents') ? held.serviceId : lab.patientServiceId,
        externalId: lab.externalId,
        entityType: 'patient',
      };
      const headers = route.path.startsWith('/integration/') ? { authorization: `Bearer ${f.key}` } : undefined;
      const bodies: Record<string, unknown> = {
        sendLabReport: f.labReport(),
        sendPrescription: f.labReport(),
        putMapping: { externalId: 'emr-patient-1' },
        createClinic: {},
        createKey: { clinicId: f.clinicId },
        createSubscription: { clinicId: f.clinicId, url: f.subscriber.url },
        createPatient: { clinicId: f.clinicId },
        createAppointment: { clinicId: f.clinicId },
        advanceClock: { seconds: 1 },
        setFaults: {},
      };
      const body = bodies[route.operationId] ?? (route.body ? {} : undefined);
      return { params, ...(headers ? { headers } : {}), ...(body === undefined ? {} : { body }) };
    };
    await expectEveryOperationAnswers(simulatorDoc, routes, send, callFor);
    expect((await send('GET', '/_sim/no-such-route', { params: {} })).body).toMatchObject({ error: { code: 'not_found', message: 'no such route' } });
  });
});
