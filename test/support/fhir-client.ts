// Signing in to the bundled FHIR server from tests: the adapter's key (made in the test's folder and
// registered as a hospital's IT would), and a client of the tests' own, with which they read and write
// the EMR directly as people at the hospital do. Both get tokens from the server's token endpoint.
import { createPrivateKey } from 'node:crypto';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { systemClock, type Clock } from '../../src/clock.ts';
import { loadFhirAuthSettings } from '../../src/emr/fhir/auth/index.ts';
import { createFhirHttp, type FhirHttp } from '../../src/emr/fhir/http.ts';
import { ensureClientKey, generateClientKey, jwksOf, type ClientKey } from '../../src/emr/fhir/auth/keys.ts';
import { createTokenSource, type TokenSource } from '../../src/emr/fhir/auth/token-source.ts';
import type { RunningFhirServer } from '../../src/fhir-server/server.ts';

export const ADAPTER_CLIENT_ID = 'emr-bridge';
const STAFF_CLIENT_ID = 'hospital-staff';

/** Registers the adapter's key (made at `<dir>/fhir-client-key.pem` on first use) with the server. */
export async function registerAdapterClient(server: RunningFhirServer, dir: string, scopes?: string[]): Promise<ClientKey> {
  const key = await ensureClientKey(join(dir, 'fhir-client-key.pem'));
  server.auth!.registerClient({ clientId: ADAPTER_CLIENT_ID, jwks: jwksOf(key.publicJwk), ...(scopes ? { scopes } : {}) });
  return key;
}

/** Settings that make an adapter sign in to the bundled server with the key registerAdapterClient made. */
export const smartSettings = (dir: string): Record<string, string> => ({
  FHIR_AUTH: 'smart',
  FHIR_CLIENT_ID: ADAPTER_CLIENT_ID,
  FHIR_PRIVATE_KEY_PATH: join(dir, 'fhir-client-key.pem'),
});

export interface FhirReader {
  call<T>(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<{ status: number; body: T }>;
  close(): Promise<void>;
}

/** A signed-in client for tests; `server()` is the server running now (the client is registered again after a restart). */
export async function createFhirReader(baseUrl: string, server: () => RunningFhirServer | undefined): Promise<FhirReader> {
  const dispatcher = new Agent();
  const generated = await generateClientKey('ES384');
  const key: ClientKey = { alg: 'ES384', kid: generated.publicJwk.kid!, privateKey: createPrivateKey(generated.privatePem), publicJwk: generated.publicJwk };
  let registeredOn: RunningFhirServer | undefined;
  let tokens: TokenSource | undefined;
  function token(): Promise<string> {
    const current = server();
    if (current && current !== registeredOn) {
      current.auth!.registerClient({ clientId: STAFF_CLIENT_ID, jwks: jwksOf(key.publicJwk) });
      registeredOn = current;
      tokens = createTokenSource({ fhirBaseUrl: baseUrl, clientId: STAFF_CLIENT_ID, key, scopes: ['system/*.cruds'], clock: systemClock, dispatcher });
    }
    return tokens!.token();
  }
  return {
    async call<T>(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown) {
      const res = await request(`${baseUrl}/${path}`, {
        method,
        dispatcher,
        headers: {
          authorization: `Bearer ${await token()}`,
          accept: 'application/fhir+json',
          ...(body === undefined ? {} : { 'content-type': 'application/fhir+json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.body.text();
      if (res.statusCode >= 400) throw new Error(`FHIR ${method} ${path.split('?')[0]} answered ${res.statusCode}`);
      return { status: res.statusCode, body: (text ? JSON.parse(text) : undefined) as T };
    },
    close: () => dispatcher.close(),
  };
}

/**
 * Reads the EMR of a zero-configuration adapter as the adapter does: its client id and the key it made in
 * its data folder, on the clock it runs on (the bundled simulator's).
 */
export function adapterFhirReader(dataDir: string, fhirBaseUrl: string, clock: Clock = systemClock): FhirReader {
  let http: FhirHttp | undefined;
  return {
    async call<T>(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown) {
      http ??= createFhirHttp({
        baseUrl: fhirBaseUrl,
        timeoutMs: 5_000,
        auth: await loadFhirAuthSettings({ mode: 'smart', clientId: ADAPTER_CLIENT_ID, privateKeyPath: join(dataDir, 'fhir-client-key.pem') }),
        clock,
        maxContentBytes: 1024 * 1024,
      });
      return http.call<T>(method, path, body);
    },
    close: async () => http?.close(),
  };
}
