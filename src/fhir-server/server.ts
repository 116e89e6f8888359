// The bundled FHIR R4 server over node:http: routes the public documents (metadata, smart-configuration),
// the token endpoint and, behind the sign-in guard when it is on, every FHIR interaction; with the vendor
// profile (./vendor/), its rules in front of the store and its control routes under /_control/.
// The embedded default EMR for `npm start`, the end-to-end tests and QA.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HttpMethod } from '@medplum/fhir-router';
import { systemClock, type Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import { createBundledAuth, type BundledAuth, type BundledAuthServer } from './auth/bundled-auth.ts';
import { capabilityStatement } from './capability.ts';
import { loadFhirDefinitions } from './definitions.ts';
import { createFhirHandler, WRITES, type FhirHandler } from './fhir-handler.ts';
import { BadRequestBody, outcome, readJsonBody, sendFhir, sendJson } from './http.ts';
import { DEFAULT_MASTER_DATA_FILE } from './vendor/master-data.ts';
import { createVendorProfile, type VendorProfile } from './vendor/profile.ts';

export type { BundledAuthServer } from './auth/bundled-auth.ts';

export interface FhirServerOptions {
  port?: number;
  host?: string;
  /** JSON-lines file that keeps the data across restarts; in memory only when absent. */
  dataFile?: string;
  logger: Logger;
  /** SMART Backend Services sign-in; absent = no sign-in (as today). */
  auth?: { tokenLifetimeSeconds?: number /* default 300 */ };
  /** Time for token expiry and assertion checks, and the vendor profile's today (its Slots ahead); default systemClock. */
  clock?: Clock;
  /** Default true. false: the CapabilityStatement declares no conditional create, and If-None-Exist is ignored (a plain create) — a stand-in for FHIR servers without it. */
  conditionalCreate?: boolean;
  /**
   * Default true: the CapabilityStatement declares the transaction and batch interactions and the base takes such
   * a Bundle. false: neither is declared and a Bundle posted to the base is refused (405) — a stand-in for FHIR
   * servers without them.
   */
  transactions?: boolean;
  /**
   * Default 'default'. 'vendor': an EMR that owns its records, as Oracle Health Millennium's R4 API (./vendor/rules.ts):
   * its own CapabilityStatement and refusals (conditionalCreate and transactions do not apply), master data
   * loaded at start, and counters of what it was asked at GET /_control/counters.
   */
  profile?: 'default' | 'vendor';
  /** The vendor profile's master data (a FHIR collection Bundle); default samples/emr-master-data.json. */
  masterDataFile?: string;
}

export interface RunningFhirServer {
  baseUrl: string;
  port: number;
  close(): Promise<void>;
  /** Present when auth is on. */
  auth?: BundledAuthServer;
}

const DEFAULT_TOKEN_LIFETIME_SECONDS = 300;

// A wildcard bind is reached on loopback; a specific address is reached on itself.
function advertisedHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

function listen(server: ReturnType<typeof createServer>, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

interface Routes {
  fhir: FhirHandler;
  auth: BundledAuth | undefined;
  capability: object;
  vendor: VendorProfile | undefined;
}

async function handleFhir(routes: Routes, req: IncomingMessage, res: ServerResponse, url: string): Promise<void> {
  const method = (req.method ?? 'GET').toUpperCase() as HttpMethod;
  routes.vendor?.observe(method, url, req.headers);
  const signedIn = routes.auth?.guard.authenticate(req.headers);
  if (signedIn && 'refusal' in signedIn) {
    sendFhir(res, signedIn.refusal.status, signedIn.refusal.body, signedIn.refusal.headers);
    return;
  }
  let body: unknown;
  try {
    body = WRITES.has(method) ? await readJsonBody(req) : undefined;
  } catch (err) {
    if (!(err instanceof BadRequestBody)) throw err;
    sendFhir(res, 400, outcome('invalid', err.message));
    return;
  }
  const forbidden = signedIn && routes.auth?.guard.authorize(signedIn.grant, method, url, body);
  if (forbidden) {
    sendFhir(res, forbidden.status, forbidden.body, forbidden.headers);
    return;
  }
  const answer = await routes.fhir({ method, url, headers: req.headers, body });
  sendFhir(res, answer.status, answer.body, answer.headers);
}

/** The vendor profile's control routes (./vendor/control.ts): counters and staff edits, outside sign-in. */
async function handleControl(vendor: VendorProfile, req: IncomingMessage, res: ServerResponse, pathname: string): Promise<void> {
  const method = req.method ?? 'GET';
  let body: unknown;
  try {
    body = method === 'POST' || method === 'PUT' ? await readJsonBody(req) : undefined;
  } catch (err) {
    if (!(err instanceof BadRequestBody)) throw err;
    sendFhir(res, 400, outcome('invalid', err.message));
    return;
  }
  const answer = await vendor.control(method, pathname, body);
  const isFhir = (answer.body as { resourceType?: unknown } | undefined)?.resourceType !== undefined;
  (isFhir ? sendFhir : sendJson)(res, answer.status, answer.body, answer.headers);
}

async function route(routes: Routes, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = req.url ?? '/';
  const pathname = url.split('?')[0];
  if (pathname === '/metadata') return sendFhir(res, 200, routes.capability);
  if (pathname === '/.well-known/smart-configuration') {
    if (routes.auth) sendJson(res, 200, routes.auth.smartConfiguration());
    else sendFhir(res, 404, outcome('not-found', 'this server has no sign-in'));
    return;
  }
  if (pathname === '/auth/token' && routes.auth) return routes.auth.tokenEndpoint(req, res);
  if (pathname?.startsWith('/_control/') && routes.vendor) return handleControl(routes.vendor, req, res, pathname);
  return handleFhir(routes, req, res, url);
}

export async function startFhirServer(opts: FhirServerOptions): Promise<RunningFhirServer> {
  loadFhirDefinitions();
  const conditionalCreate = opts.conditionalCreate ?? true;
  const transactions = opts.transactions ?? true;
  const vendorProfile = opts.profile === 'vendor';
  const store = await createFhirHandler({
    logger: opts.logger,
    conditionalCreate: conditionalCreate && !vendorProfile,
    transactions: transactions && !vendorProfile,
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.dataFile ? { dataFile: opts.dataFile } : {}),
  });
  const vendor = vendorProfile
    ? await createVendorProfile({
        store,
        masterDataFile: opts.masterDataFile ?? DEFAULT_MASTER_DATA_FILE,
        logger: opts.logger,
        clock: opts.clock ?? systemClock,
      })
    : undefined;
  const server = createServer();
  const host = opts.host ?? '127.0.0.1';
  const port = await listen(server, opts.port ?? 0, host);
  const baseUrl = `http://${advertisedHost(host)}:${port}`;
  const auth = opts.auth
    ? createBundledAuth({
        baseUrl,
        tokenLifetimeSeconds: opts.auth.tokenLifetimeSeconds ?? DEFAULT_TOKEN_LIFETIME_SECONDS,
        clock: opts.clock ?? systemClock,
        logger: opts.logger,
      })
    : undefined;
  const tokenUrl = auth ? { tokenUrl: auth.api.tokenUrl } : {};
  const capability = vendor ? vendor.capability(tokenUrl) : capabilityStatement({ conditionalCreate, transactions, ...tokenUrl });
  const routes: Routes = { fhir: vendor?.fhir ?? store, auth, capability, vendor };
  // Attached in the same tick the listen promise settles, before any connection can be read.
  server.on('request', (req, res) => {
    route(routes, req, res).catch((err: unknown) => {
      opts.logger.error({ err: (err as Error).message }, 'FHIR request failed');
      if (!res.headersSent) sendFhir(res, 500, outcome('exception', 'internal error'));
    });
  });
  return {
    baseUrl,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
    ...(auth ? { auth: auth.api } : {}),
  };
}
