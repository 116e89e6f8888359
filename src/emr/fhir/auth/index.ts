// How the FHIR client signs in to the EMR (FHIR_AUTH): not at all, with a static bearer token, or with
// SMART Backend Services. The FHIR client asks this for each call's Authorization header and, on a 401,
// for one renewal; nothing outside src/emr/fhir knows that tokens exist.
import type { Dispatcher } from 'undici';
import type { Clock } from '../../../clock.ts';
import type { FhirAuthConfig } from '../settings.ts';
import { loadClientKey, type ClientKey } from './keys.ts';
import { createTokenSource, type TokenSource } from './token-source.ts';

/**
 * What the adapter reads and writes, as SMART v2 system scopes: the four records it claims (create, read,
 * update, search by identifier), the documents it sends and their contents (read, search), and the
 * Communication it writes each document's outcome to (create, update, search by identifier).
 */
export const DEFAULT_FHIR_SCOPES = [
  'system/Patient.crus',
  'system/Practitioner.crus',
  'system/Location.crus',
  'system/Appointment.crus',
  'system/DocumentReference.rs',
  'system/Binary.r',
  'system/Communication.crus',
];

/** FHIR_AUTH with the key loaded: what the FHIR client runs with. */
export type FhirAuthSettings =
  | { mode: 'none' }
  | { mode: 'bearer'; token: string }
  | { mode: 'smart'; clientId: string; key: ClientKey; tokenUrl?: string; scopes: string[] };

export interface FhirAuth {
  /** The Authorization header for the next call; undefined when the EMR asks for none. */
  authorization(): Promise<string | undefined>;
  /** The EMR answered 401 to `rejected`: a header to try once more with, or undefined when nothing can change. */
  renew(rejected: string | undefined): Promise<string | undefined>;
  /** The SMART token source (tests, benchmarks); absent in the other modes. */
  tokens?: TokenSource;
}

/** Loads the key the settings name. Throws ClientKeyError naming the file when it cannot be used. */
export async function loadFhirAuthSettings(config: FhirAuthConfig): Promise<FhirAuthSettings> {
  if (config.mode !== 'smart') return config;
  return {
    mode: 'smart',
    clientId: config.clientId,
    key: await loadClientKey(config.privateKeyPath, config.keyId),
    ...(config.tokenUrl ? { tokenUrl: config.tokenUrl } : {}),
    scopes: config.scopes ?? [...DEFAULT_FHIR_SCOPES, ...(config.addedScopes ?? [])],
  };
}

export function createFhirAuth(settings: FhirAuthSettings, deps: { fhirBaseUrl: string; clock: Clock; dispatcher: Dispatcher }): FhirAuth {
  if (settings.mode === 'none') return { authorization: async () => undefined, renew: async () => undefined };
  if (settings.mode === 'bearer') {
    const header = `Bearer ${settings.token}`;
    return { authorization: async () => header, renew: async () => undefined };
  }
  const tokens = createTokenSource({
    fhirBaseUrl: deps.fhirBaseUrl,
    ...(settings.tokenUrl ? { tokenUrl: settings.tokenUrl } : {}),
    clientId: settings.clientId,
    key: settings.key,
    scopes: settings.scopes,
    clock: deps.clock,
    dispatcher: deps.dispatcher,
  });
  const bearer = (t: string) => `Bearer ${t}`;
  return {
    authorization: async () => bearer(await tokens.token()),
    renew: async (rejected) => bearer(await tokens.renew(rejected?.replace(/^Bearer /, '') ?? '')),
    tokens,
  };
}
