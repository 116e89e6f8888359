// What zero-configuration mode set up, kept in <DATA_DIR>/bundled.json (mode 0600): the clinic, key and
// subscription on the bundled simulator, and the generated admin token when ADMIN_TOKEN is not set. A
// restart reuses it; the CLI reads it so that `npm start` plus `npx emr-bridge replay samples` needs no flags.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface BundledCredentials {
  clinicId: string;
  apiKey: string;
  subscriptionId: string;
  keyId: string;
  /** The subscription's signing secrets, newest first: two while a rotation is under way. */
  signingSecrets: string[];
  webhookUrl: string;
  /** The demo the clinic was set up for when not the default one (`vendor`: its fixed roster, ./demo-clinic.ts). */
  profile?: 'vendor';
}

/** Credentials as files written before rotations were followed hold them: one `signingSecret`. */
type SavedCredentials = Omit<BundledCredentials, 'signingSecrets'> & { signingSecrets?: string[]; signingSecret?: string };

export interface BundledState {
  /** Only while ADMIN_TOKEN is unset: otherwise the setting is the one token. */
  adminToken?: string;
  /** The bundled simulator's address while it runs (the CLI reads its clock there). */
  serviceUrl?: string;
  /** The EMR's bundled stand-in's address while it runs (`emr-bridge fhir-get` reads the FHIR server's there). */
  emrAddress?: string;
  /**
   * The stand-in's profile when not its default (the FHIR server's `vendor`): `emr-bridge replay` books the samples'
   * appointments into its Slots then.
   */
  emrProfile?: string;
  credentials?: BundledCredentials;
}

export const bundledStatePath = (dataDir: string): string => join(dataDir, 'bundled.json');

/** The saved state, or an empty one when there is none (or it is unreadable: set-up then starts over). */
export function readBundledState(dataDir: string): BundledState {
  const path = bundledStatePath(dataDir);
  if (!existsSync(path)) return {};
  try {
    return withSecretList(JSON.parse(readFileSync(path, 'utf8')) as Omit<BundledState, 'credentials'> & { credentials?: SavedCredentials });
  } catch {
    return {};
  }
}

function withSecretList(saved: Omit<BundledState, 'credentials'> & { credentials?: SavedCredentials }): BundledState {
  if (!saved.credentials) return saved as BundledState;
  const { signingSecret, signingSecrets, ...rest } = saved.credentials;
  return { ...saved, credentials: { ...rest, signingSecrets: signingSecrets ?? (signingSecret ? [signingSecret] : []) } };
}

export function writeBundledState(dataDir: string, state: BundledState): void {
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(bundledStatePath(dataDir), `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
}

/** The EMR's bundled stand-in as bundled.json notes it: where it listens, and its profile when not its default. */
export interface BundledEmrNote {
  address: string;
  profile?: string;
}

/**
 * Notes where the EMR's bundled stand-in listens, or that none runs this time (an EMR of its own): the address
 * of a past one must not be followed. A file from before the EMR modules names it `fhirBaseUrl`.
 */
export function rememberBundledEmr(dataDir: string, emr: BundledEmrNote | undefined): void {
  const state = readBundledState(dataDir);
  if (withEmrAddress(state, emr)) writeBundledState(dataDir, state);
}

/** Sets (or, undefined, drops) the EMR stand-in's address and profile in `state`, and the older key; whether it changed. */
export function withEmrAddress(state: BundledState, emr: BundledEmrNote | undefined): boolean {
  const legacy = state as BundledState & { fhirBaseUrl?: string };
  if (state.emrAddress === emr?.address && state.emrProfile === emr?.profile && legacy.fhirBaseUrl === undefined) return false;
  delete legacy.fhirBaseUrl;
  if (emr) state.emrAddress = emr.address;
  else delete state.emrAddress;
  if (emr?.profile) state.emrProfile = emr.profile;
  else delete state.emrProfile;
  return true;
}
