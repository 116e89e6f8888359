// The FHIR module's settings (FHIR_*): their schema, checked with every other setting before anything is
// written, and the rules that belong to a FHIR EMR (its sign-in, https in production). Pure, like config.ts,
// which merges this schema into its own and hands the FHIR_* values here when EMR_PROTOCOL is fhir.
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { baseUrlOrBundled, csv, int, optionalUrl } from '../../config-schema.ts';
import type { EmrSettingsContext } from '../settings-context.ts';

/** How the adapter signs in to the EMR (FHIR_AUTH and the settings that go with each mode). */
export type FhirAuthConfig =
  | { mode: 'none' }
  | { mode: 'bearer'; token: string }
  | {
      mode: 'smart';
      clientId: string;
      privateKeyPath: string;
      keyId?: string;
      tokenUrl?: string;
      /** FHIR_SCOPES; unset: the default ones (src/emr/fhir/auth/index.ts) and `addedScopes`. */
      scopes?: string[];
      /** What the settings need beside the default scopes: slot booking's Slot search. */
      addedScopes?: string[];
    };

/** The client id and key file zero-configuration mode registers with the bundled FHIR server. */
export const BUNDLED_FHIR_CLIENT_ID = 'emr-bridge';
export const BUNDLED_FHIR_KEY_FILE = 'fhir-client-key.pem';

/** The bundled FHIR server's profiles (`fhir-server --profile`): FHIR_SERVER_PROFILE picks one in zero-configuration mode. */
const SERVER_PROFILES = ['default', 'vendor'] as const;
export type ServerProfile = (typeof SERVER_PROFILES)[number];

export const FHIR_SETTINGS_SHAPE = {
  FHIR_BASE_URL: baseUrlOrBundled,
  FHIR_IDENTIFIER_SYSTEM: z.string().min(1).default('urn:emr-bridge:service'),
  FHIR_TIMEOUT_MS: int(10_000, 100),
  FHIR_LAB_REPORT_TYPE_CODES: csv.transform((v) => (v.length ? v : ['http://loinc.org|11502-2'])),
  FHIR_PRESCRIPTION_TYPE_CODES: csv.transform((v) => (v.length ? v : ['http://loinc.org|57833-6'])),
  FHIR_AUTH: z.enum(['none', 'bearer', 'smart']).optional(),
  FHIR_BEARER_TOKEN: z.string().optional(),
  FHIR_CLIENT_ID: z.string().optional(),
  FHIR_PRIVATE_KEY_PATH: z.string().optional(),
  FHIR_KEY_ID: z.string().optional(),
  FHIR_TOKEN_URL: optionalUrl,
  FHIR_SCOPES: z
    .string()
    .optional()
    .transform((s) => (s ?? '').split(/\s+/).filter(Boolean)),
  // A document's content read from the EMR (a Binary's JSON is a third larger than the 15 MB file it holds).
  FHIR_MAX_CONTENT_BYTES: int(25 * 1024 * 1024, 1024),
  // create: a free-standing Appointment with start and end; slot: booked into the doctor's free Slot at its start.
  // Unset: slot beside the bundled FHIR server's vendor profile, create otherwise.
  FHIR_APPOINTMENT_BOOKING: z.enum(['create', 'slot'], { error: 'must be create or slot' }).optional(),
  // The bundled FHIR server's profile: default (a FHIR store) or vendor (an EMR that owns its records).
  FHIR_SERVER_PROFILE: z.enum(SERVER_PROFILES, { error: 'must be default or vendor' }).optional(),
  // Which of Patient, Practitioner, Location the adapter may create; unset: what the CapabilityStatement declares.
  FHIR_CREATES: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return undefined;
      if (v.trim() === 'none') return [];
      const types = v.split(',').map((t) => t.trim());
      const unknown = types.filter((t) => !(CREATABLE_TYPES as readonly string[]).includes(t));
      if (unknown.length) ctx.addIssue({ code: 'custom', message: `not ${CREATABLE_TYPES.join(', ')} or none: ${unknown.join(', ').slice(0, 80)}` });
      return [...new Set(types)] as CreatableType[];
    }),
};

/** The scope slot booking needs beside the default ones: the doctor's free Slot searched (and read). */
export const SLOT_BOOKING_SCOPE = 'system/Slot.rs';

/** The resource types FHIR_CREATES may name: the records the adapter claims by the service's id, appointments aside. */
export const CREATABLE_TYPES = ['Patient', 'Practitioner', 'Location'] as const;
export type CreatableType = (typeof CREATABLE_TYPES)[number];

const fhirSchema = z.object(FHIR_SETTINGS_SHAPE);
type FhirRaw = z.output<typeof fhirSchema>;

/** The FHIR module's settings, as the module is built from them. */
export interface FhirSettings {
  /** Unset: the bundled FHIR server (its address is known once it listens). */
  baseUrl?: string;
  identifierSystem: string;
  timeoutMs: number;
  labReportTypeCodes: string[];
  prescriptionTypeCodes: string[];
  auth: FhirAuthConfig;
  maxContentBytes: number;
  /** FHIR_CREATES; unset: the types whose create interaction the EMR's CapabilityStatement declares. */
  creates?: CreatableType[];
  /** FHIR_APPOINTMENT_BOOKING; unset: `slot` beside the bundled vendor profile, `create` otherwise. */
  booking: 'create' | 'slot';
  /** FHIR_SERVER_PROFILE: the bundled FHIR server's profile (only with the bundled server). */
  serverProfile: ServerProfile;
}

/** FHIR_* (already checked by the merged schema) to the module's settings; rule breaches go to `problems`. */
export function fhirSettingsFrom(raw: FhirRaw, ctx: EmrSettingsContext, problems: string[]): FhirSettings {
  if (ctx.production) {
    for (const name of ['FHIR_BASE_URL', 'FHIR_TOKEN_URL'] as const) {
      const url = raw[name];
      if (url && url !== 'bundled' && !url.startsWith('https://') && !ctx.isLoopback(url))
        problems.push(`${name}: must be https with NODE_ENV=production (loopback excepted)`);
    }
  }
  if (raw.FHIR_SERVER_PROFILE && !ctx.bundled)
    problems.push('FHIR_SERVER_PROFILE: only for the bundled FHIR server; FHIR_BASE_URL names an EMR of its own (unset it, or set it to `bundled`)');
  const serverProfile = raw.FHIR_SERVER_PROFILE ?? 'default';
  // The vendor profile books into its Slots, as the EMR it stands in for wants; an explicit setting still wins.
  const booking = raw.FHIR_APPOINTMENT_BOOKING ?? (serverProfile === 'vendor' ? 'slot' : 'create');
  return {
    ...(raw.FHIR_BASE_URL && !ctx.bundled ? { baseUrl: raw.FHIR_BASE_URL } : {}),
    identifierSystem: raw.FHIR_IDENTIFIER_SYSTEM,
    timeoutMs: raw.FHIR_TIMEOUT_MS,
    labReportTypeCodes: raw.FHIR_LAB_REPORT_TYPE_CODES,
    prescriptionTypeCodes: raw.FHIR_PRESCRIPTION_TYPE_CODES,
    auth: fhirAuthFrom(raw, ctx, booking, problems),
    maxContentBytes: raw.FHIR_MAX_CONTENT_BYTES,
    ...(raw.FHIR_CREATES ? { creates: raw.FHIR_CREATES } : {}),
    booking,
    serverProfile,
  };
}

/**
 * FHIR_AUTH and its settings. Default: `none` beside a configured FHIR_BASE_URL; `smart` against the
 * bundled FHIR server, with a key kept in the data folder, as a production deployment would sign in.
 */
function fhirAuthFrom(s: FhirRaw, ctx: EmrSettingsContext, booking: FhirSettings['booking'], problems: string[]): FhirAuthConfig {
  const bundled = ctx.bundled;
  const mode = s.FHIR_AUTH ?? (bundled ? 'smart' : 'none');
  if (mode === 'none') return { mode };
  if (mode === 'bearer') {
    if (bundled) problems.push('FHIR_AUTH: the bundled FHIR server signs in with smart (or none), not bearer');
    if (!s.FHIR_BEARER_TOKEN) problems.push('FHIR_BEARER_TOKEN: required when FHIR_AUTH is bearer');
    return { mode, token: s.FHIR_BEARER_TOKEN ?? '' };
  }
  if (!bundled && !s.FHIR_CLIENT_ID) problems.push('FHIR_CLIENT_ID: required when FHIR_AUTH is smart');
  if (!bundled && !s.FHIR_PRIVATE_KEY_PATH) problems.push('FHIR_PRIVATE_KEY_PATH: required when FHIR_AUTH is smart');
  return {
    mode,
    clientId: s.FHIR_CLIENT_ID ?? BUNDLED_FHIR_CLIENT_ID,
    privateKeyPath: s.FHIR_PRIVATE_KEY_PATH ? resolve(s.FHIR_PRIVATE_KEY_PATH) : join(ctx.dataDir, BUNDLED_FHIR_KEY_FILE),
    ...(s.FHIR_KEY_ID ? { keyId: s.FHIR_KEY_ID } : {}),
    ...(s.FHIR_TOKEN_URL ? { tokenUrl: s.FHIR_TOKEN_URL } : {}),
    ...(s.FHIR_SCOPES.length ? { scopes: s.FHIR_SCOPES } : booking === 'slot' ? { addedScopes: [SLOT_BOOKING_SCOPE] } : {}),
  };
}
