// Every setting of emr-bridge, read from the environment (and a .env file) once at start-up and checked
// with zod. This is the only module that reads process.env; everything else receives a Config.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import cron from 'node-cron';
import { z } from 'zod';
import { unknownSettings } from './config-names.ts';
import { fileSetting, overlaySettings, readSecretFile, resolveSecretFiles, type SecretFileReader } from './config-secrets.ts';
import { ConfigError } from './errors.ts';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const int = (def: number, min = 0, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max).default(def);
const optionalUrl = z
  .string()
  .trim()
  .transform((s) => (s === '' ? undefined : s.replace(/\/+$/, '')))
  .pipe(z.url({ protocol: /^https?$/ }).optional())
  .optional();
/** A base URL, or the word `bundled` for the bundled part (the simulator, the FHIR server). */
const baseUrlOrBundled = z
  .string()
  .trim()
  .transform((s) => (s === '' ? undefined : s.replace(/\/+$/, '')))
  .pipe(z.union([z.literal('bundled'), z.url({ protocol: /^https?$/ })]).optional())
  .optional();
const csv = z
  .string()
  .optional()
  .transform((s) =>
    (s ?? '')
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  );

const schema = z.object({
  NODE_ENV: z.string().optional(),
  PORT: int(3000, 0, 65535),
  HOST: z.string().min(1).default('127.0.0.1'),
  ADMIN_HOST: z.string().min(1).optional(),
  ADMIN_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  DATA_DIR: z.string().default('./data'),
  DATABASE_PATH: z.string().optional(),
  DATABASE_URL: z.string().optional(),
  SERVICE_BASE_URL: baseUrlOrBundled,
  SERVICE_API_KEY: z.string().optional(),
  SERVICE_KEY_ID: z.string().optional(),
  SERVICE_SIGNING_SECRETS: csv,
  SERVICE_TIMEOUT_MS: int(10_000, 100),
  WEBHOOK_TOLERANCE_SECONDS: int(300, 1, 86_400),
  WEBHOOK_MAX_BODY_BYTES: int(256 * 1024, 1024, 16 * 1024 * 1024),
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
  ADMIN_TOKEN: z.string().optional(),
  // Named admin credentials with roles (src/access/credentials-file.ts), read and checked at start.
  ADMIN_CREDENTIALS_FILE: z.string().optional(),
  // A document pushed through the admin API carries its file in base64 (15 MB of file is 20 MB of JSON).
  ADMIN_MAX_BODY_BYTES: int(25 * 1024 * 1024, 1024),
  // The operator console's sessions end after this many minutes without a request (and after 12 hours at most).
  CONSOLE_SESSION_MINUTES: int(30, 1, 720),
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  // About a day of retries at the backoff cap: an EMR outage or maintenance window is ridden out, not dead-lettered.
  PROCESSOR_MAX_ATTEMPTS: int(300, 1, 10_000),
  PROCESSOR_BACKOFF_BASE_MS: int(1_000, 1),
  PROCESSOR_BACKOFF_MAX_MS: int(5 * 60_000, 1),
  PROCESSOR_LEASE_MS: int(60_000, 1_000),
  PROCESSOR_POLL_MS: int(200, 10),
  PROCESSOR_CONCURRENCY: int(4, 1, 64),
  RETENTION_BODY_DAYS: int(7, 1),
  RETENTION_EVENT_ID_DAYS: int(30, 7),
  // The audit trail of admin actions: six years by default (HIPAA keeps its documentation that long).
  RETENTION_AUDIT_DAYS: int(2190, 1),
  PUSHER_SCAN_CRON: z
    .string()
    .default('*/30 * * * * *')
    .refine((v) => cron.validate(v), 'not a cron expression (five or six fields, e.g. "*/30 * * * * *")'),
  // About a day at the backoff cap before a document is failed here (and can still be sent again by a person).
  PUSHER_MAX_ATTEMPTS: int(150, 1, 10_000),
  PUSHER_BACKOFF_BASE_MS: int(2_000, 1),
  PUSHER_BACKOFF_MAX_MS: int(10 * 60_000, 1),
  PUSHER_HELD_POLL_SECONDS: int(300, 1),
  PUSHER_POLL_MS: int(250, 10),
  PUSHER_LEASE_MS: int(60_000, 1_000),
  PUSHER_CONCURRENCY: int(16, 1, 64),
  PUSHER_HELD_POLL_BATCH: int(50, 1, 1_000),
  SIMULATOR_DATABASE_PATH: z.string().optional(),
});

export type RawSettings = z.input<typeof schema>;

/**
 * The settings that hold a secret (not a path to one, as FHIR_PRIVATE_KEY_PATH is): each may instead be read
 * from a file named by `<NAME>_FILE` (src/config-secrets.ts), kept out of the environment.
 */
export const SECRET_SETTINGS = [
  'DATABASE_URL',
  'SERVICE_API_KEY',
  'SERVICE_SIGNING_SECRETS',
  'FHIR_BEARER_TOKEN',
  'ADMIN_TOKEN',
] as const satisfies readonly (keyof RawSettings)[];
const SECRET_FILE_SETTINGS: readonly string[] = SECRET_SETTINGS.map(fileSetting);

/** How the adapter signs in to the EMR (FHIR_AUTH and the settings that go with each mode). */
export type FhirAuthConfig =
  | { mode: 'none' }
  | { mode: 'bearer'; token: string }
  | { mode: 'smart'; clientId: string; privateKeyPath: string; keyId?: string; tokenUrl?: string; scopes?: string[] };

/** The client id and key file zero-configuration mode registers with the bundled FHIR server. */
export const BUNDLED_FHIR_CLIENT_ID = 'emr-bridge';
export const BUNDLED_FHIR_KEY_FILE = 'fhir-client-key.pem';

export interface Config {
  port: number;
  /** Interface to bind; 127.0.0.1 by default, 0.0.0.0 in the container image. */
  host: string;
  dataDir: string;
  /** The SQLite file (unused once databaseUrl is set). */
  databasePath: string;
  /** DATABASE_URL: postgres://… keeps the state in PostgreSQL, shared by several replicas; unset: SQLite at databasePath. */
  databaseUrl?: string;
  /** Unset means: start the bundled simulator and wire it up. */
  service: {
    baseUrl?: string;
    apiKey?: string;
    keyId?: string;
    signingSecrets: string[];
    timeoutMs: number;
  };
  webhook: { toleranceSeconds: number; maxBodyBytes: number };
  /** Unset baseUrl means: start the bundled FHIR server. */
  fhir: {
    baseUrl?: string;
    identifierSystem: string;
    timeoutMs: number;
    labReportTypeCodes: string[];
    prescriptionTypeCodes: string[];
    auth: FhirAuthConfig;
    maxContentBytes: number;
  };
  adminToken?: string;
  /** ADMIN_CREDENTIALS_FILE: the named admin credentials (absolute path); read and checked at start. */
  adminCredentialsFile?: string;
  /** Largest body the admin API reads (a pushed document carries its file). */
  adminMaxBodyBytes: number;
  /** The operator console (/console): a session ends after sessionMinutes without a request. */
  console: { sessionMinutes: number };
  /** ADMIN_HOST/ADMIN_PORT: the admin API and /metrics on a listener of their own; unset: the adapter's port. */
  admin?: { host: string; port: number };
  /** NODE_ENV=production: no bundled part, https base URLs, a set ADMIN_TOKEN (checked here). */
  production: boolean;
  logLevel: (typeof LOG_LEVELS)[number];
  processor: {
    maxAttempts: number;
    backoffBaseMs: number;
    backoffMaxMs: number;
    leaseMs: number;
    pollMs: number;
    concurrency: number;
  };
  /** Days kept: event bodies, finished events' ids, audit entries (never fewer than eventIdDays). */
  retention: { bodyDays: number; eventIdDays: number; auditDays: number };
  pusher: {
    scanCron: string;
    maxAttempts: number;
    backoffBaseMs: number;
    backoffMaxMs: number;
    heldPollSeconds: number;
    /** Pause between passes of the send loop. */
    pollMs: number;
    /** How long a send holds a document before another may take it over. */
    leaseMs: number;
    /** Sends in flight at once. */
    concurrency: number;
    /** HELD documents polled, and statuses written back to the EMR, per pass at most. */
    heldPollBatch: number;
  };
  simulator: { databasePath?: string };
  /**
   * Which parts run bundled: both when neither SERVICE_BASE_URL nor FHIR_BASE_URL is set (`npm start` on a
   * fresh machine); otherwise only a side whose setting says `bundled`.
   */
  bundled: { service: boolean; fhir: boolean };
}

/**
 * Parses settings; throws ConfigError naming every bad setting. Pure: give it any record of strings. It reads
 * no file: `<NAME>_FILE` settings are read before it (loadConfigFrom), and refused here if still unread.
 */
export function parseConfig(env: Record<string, string | undefined>): Config {
  // An empty value means unset, as in `SERVICE_BASE_URL= npm start`.
  const given = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ''));
  const parsed = schema.safeParse(given);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.') || '(settings)'}: ${i.message}`));
  }
  const s = parsed.data;
  const problems: string[] = unknownSettings(given as Record<string, string>, SETTING_NAMES);
  for (const name of SECRET_FILE_SETTINGS.filter((n) => n in given))
    problems.push(`${name}: files are read by loadConfig/loadConfigFrom, not parseConfig; pass the value itself`);
  const bundled = deploymentProblems(s, problems);
  databaseProblems(s, problems);
  if (s.ADMIN_TOKEN !== undefined && s.ADMIN_TOKEN.length < 16) problems.push('ADMIN_TOKEN: must be at least 16 characters');
  if (s.RETENTION_AUDIT_DAYS < s.RETENTION_EVENT_ID_DAYS)
    problems.push('RETENTION_AUDIT_DAYS: must not be below RETENTION_EVENT_ID_DAYS (the audit trail outlives the events it names)');
  if (s.PROCESSOR_BACKOFF_MAX_MS < s.PROCESSOR_BACKOFF_BASE_MS) problems.push('PROCESSOR_BACKOFF_MAX_MS: must not be below PROCESSOR_BACKOFF_BASE_MS');
  if (s.PUSHER_BACKOFF_MAX_MS < s.PUSHER_BACKOFF_BASE_MS) problems.push('PUSHER_BACKOFF_MAX_MS: must not be below PUSHER_BACKOFF_BASE_MS');
  leaseProblems(s, problems);
  const dataDir = resolve(s.DATA_DIR);
  const fhirAuth = fhirAuthFrom(s, dataDir, problems);
  if (problems.length) throw new ConfigError(problems);

  return {
    port: s.PORT,
    host: s.HOST,
    dataDir,
    databasePath: s.DATABASE_PATH ? resolve(s.DATABASE_PATH) : join(dataDir, 'emr-bridge.db'),
    ...(s.DATABASE_URL ? { databaseUrl: s.DATABASE_URL } : {}),
    service: {
      ...(s.SERVICE_BASE_URL && !bundled.service ? { baseUrl: s.SERVICE_BASE_URL } : {}),
      ...(s.SERVICE_API_KEY ? { apiKey: s.SERVICE_API_KEY } : {}),
      ...(s.SERVICE_KEY_ID ? { keyId: s.SERVICE_KEY_ID } : {}),
      signingSecrets: s.SERVICE_SIGNING_SECRETS,
      timeoutMs: s.SERVICE_TIMEOUT_MS,
    },
    webhook: { toleranceSeconds: s.WEBHOOK_TOLERANCE_SECONDS, maxBodyBytes: s.WEBHOOK_MAX_BODY_BYTES },
    fhir: {
      ...(s.FHIR_BASE_URL && !bundled.fhir ? { baseUrl: s.FHIR_BASE_URL } : {}),
      identifierSystem: s.FHIR_IDENTIFIER_SYSTEM,
      timeoutMs: s.FHIR_TIMEOUT_MS,
      labReportTypeCodes: s.FHIR_LAB_REPORT_TYPE_CODES,
      prescriptionTypeCodes: s.FHIR_PRESCRIPTION_TYPE_CODES,
      auth: fhirAuth,
      maxContentBytes: s.FHIR_MAX_CONTENT_BYTES,
    },
    ...(s.ADMIN_TOKEN ? { adminToken: s.ADMIN_TOKEN } : {}),
    ...(s.ADMIN_CREDENTIALS_FILE ? { adminCredentialsFile: resolve(s.ADMIN_CREDENTIALS_FILE) } : {}),
    adminMaxBodyBytes: s.ADMIN_MAX_BODY_BYTES,
    console: { sessionMinutes: s.CONSOLE_SESSION_MINUTES },
    ...(s.ADMIN_PORT !== undefined || s.ADMIN_HOST ? { admin: { host: s.ADMIN_HOST ?? s.HOST, port: s.ADMIN_PORT ?? 0 } } : {}),
    production: s.NODE_ENV === 'production',
    logLevel: s.LOG_LEVEL,
    processor: {
      maxAttempts: s.PROCESSOR_MAX_ATTEMPTS,
      backoffBaseMs: s.PROCESSOR_BACKOFF_BASE_MS,
      backoffMaxMs: s.PROCESSOR_BACKOFF_MAX_MS,
      leaseMs: s.PROCESSOR_LEASE_MS,
      pollMs: s.PROCESSOR_POLL_MS,
      concurrency: s.PROCESSOR_CONCURRENCY,
    },
    retention: { bodyDays: s.RETENTION_BODY_DAYS, eventIdDays: s.RETENTION_EVENT_ID_DAYS, auditDays: s.RETENTION_AUDIT_DAYS },
    pusher: {
      scanCron: s.PUSHER_SCAN_CRON,
      maxAttempts: s.PUSHER_MAX_ATTEMPTS,
      backoffBaseMs: s.PUSHER_BACKOFF_BASE_MS,
      backoffMaxMs: s.PUSHER_BACKOFF_MAX_MS,
      heldPollSeconds: s.PUSHER_HELD_POLL_SECONDS,
      pollMs: s.PUSHER_POLL_MS,
      leaseMs: s.PUSHER_LEASE_MS,
      concurrency: s.PUSHER_CONCURRENCY,
      heldPollBatch: s.PUSHER_HELD_POLL_BATCH,
    },
    simulator: s.SIMULATOR_DATABASE_PATH ? { databasePath: resolve(s.SIMULATOR_DATABASE_PATH) } : {},
    bundled,
  };
}

/** Every setting emr-bridge reads, the secrets' `_FILE` variants too (the README and .env.example document each; a test checks). */
export const SETTING_NAMES: readonly string[] = [...Object.keys(schema.shape), ...SECRET_FILE_SETTINGS];
const isLoopback = (url: string) => ['localhost', '127.0.0.1', '[::1]'].includes(new URL(url).hostname) || new URL(url).hostname.startsWith('127.');

/**
 * The deployment rules: which parts are bundled, and that none is by accident. With nothing set, both are
 * (zero configuration). Once one side is set, the other must be too, to an address or to `bundled`; in
 * production nothing is bundled, addresses are https (loopback excepted) and the admin token is set.
 */
function deploymentProblems(s: z.output<typeof schema>, problems: string[]): Config['bundled'] {
  const zeroConfiguration = !s.SERVICE_BASE_URL && !s.FHIR_BASE_URL;
  const bundled = { service: zeroConfiguration || s.SERVICE_BASE_URL === 'bundled', fhir: zeroConfiguration || s.FHIR_BASE_URL === 'bundled' };
  if (!zeroConfiguration) {
    if (!s.SERVICE_BASE_URL)
      problems.push("SERVICE_BASE_URL: required once FHIR_BASE_URL is set (the service's address, or `bundled` for the bundled simulator)");
    if (!s.FHIR_BASE_URL)
      problems.push("FHIR_BASE_URL: required once SERVICE_BASE_URL is set (the EMR's FHIR base URL, or `bundled` for the bundled FHIR server)");
  }
  if (s.SERVICE_BASE_URL && !bundled.service) {
    if (!s.SERVICE_API_KEY) problems.push('SERVICE_API_KEY: required when SERVICE_BASE_URL is set');
    if (!s.SERVICE_KEY_ID) problems.push('SERVICE_KEY_ID: required when SERVICE_BASE_URL is set');
    if (s.SERVICE_SIGNING_SECRETS.length === 0) problems.push('SERVICE_SIGNING_SECRETS: at least one secret is required when SERVICE_BASE_URL is set');
    if (!s.ADMIN_TOKEN) problems.push('ADMIN_TOKEN: required (at least 16 characters) when SERVICE_BASE_URL is set');
  }
  if (s.NODE_ENV === 'production') {
    if (bundled.service) problems.push("SERVICE_BASE_URL: NODE_ENV=production runs no bundled part; set the service's https address");
    if (bundled.fhir) problems.push("FHIR_BASE_URL: NODE_ENV=production runs no bundled part; set the EMR's https FHIR base URL");
    for (const name of ['SERVICE_BASE_URL', 'FHIR_BASE_URL', 'FHIR_TOKEN_URL'] as const) {
      const url = s[name];
      if (url && url !== 'bundled' && !url.startsWith('https://') && !isLoopback(url))
        problems.push(`${name}: must be https with NODE_ENV=production (loopback excepted)`);
    }
    if (!s.ADMIN_TOKEN) problems.push('ADMIN_TOKEN: required with NODE_ENV=production (never generated)');
  }
  return bundled;
}

/**
 * A lease must outlast the calls made under it: once it runs out, another replica (or this process after a
 * restart) may take the work over while the call is still under way. A document send starts only while half
 * its lease is left (src/pusher/send.ts), so no document is sent twice while its sender lives only if a call
 * to the service ends within that half. An event is applied under its lease through FHIR calls, so a lease
 * shorter than two of them would let another replica apply the entity's next event before this call lands.
 */
function leaseProblems(s: z.output<typeof schema>, problems: string[]): void {
  if (s.PUSHER_LEASE_MS < 2 * s.SERVICE_TIMEOUT_MS)
    problems.push(
      `PUSHER_LEASE_MS: must be at least twice SERVICE_TIMEOUT_MS (${s.PUSHER_LEASE_MS} < 2 x ${s.SERVICE_TIMEOUT_MS}): a send starts only while half its lease is left, and a call to the service may take SERVICE_TIMEOUT_MS; raise PUSHER_LEASE_MS or lower SERVICE_TIMEOUT_MS`,
    );
  if (s.PROCESSOR_LEASE_MS < 2 * s.FHIR_TIMEOUT_MS)
    problems.push(
      `PROCESSOR_LEASE_MS: must be at least twice FHIR_TIMEOUT_MS (${s.PROCESSOR_LEASE_MS} < 2 x ${s.FHIR_TIMEOUT_MS}): an event is applied under its lease, and one FHIR call may take FHIR_TIMEOUT_MS; raise PROCESSOR_LEASE_MS or lower FHIR_TIMEOUT_MS`,
    );
}

/**
 * DATABASE_URL: a PostgreSQL URL (postgres:// or postgresql://) with a host, or unset. The messages never
 * repeat the URL, which holds the password.
 */
function databaseProblems(s: z.output<typeof schema>, problems: string[]): void {
  if (!s.DATABASE_URL) return;
  let url: URL | undefined;
  try {
    url = new URL(s.DATABASE_URL);
  } catch {
    problems.push('DATABASE_URL: not a URL; expected postgres://user:password@host:5432/database');
    return;
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
    problems.push(
      `DATABASE_URL: only PostgreSQL is supported (postgres:// or postgresql://), not ${url.protocol}//; unset it to keep state in SQLite at DATABASE_PATH`,
    );
  else if (!url.hostname && !url.searchParams.get('host')) problems.push('DATABASE_URL: names no host; expected postgres://user:password@host:5432/database');
  if (s.DATABASE_PATH) problems.push('DATABASE_PATH: the state is in PostgreSQL once DATABASE_URL is set; unset one of the two');
}

/**
 * FHIR_AUTH and its settings. Default: `none` beside a configured FHIR_BASE_URL; `smart` against the
 * bundled FHIR server, with a key kept in the data folder, as a production deployment would sign in.
 */
function fhirAuthFrom(s: z.output<typeof schema>, dataDir: string, problems: string[]): FhirAuthConfig {
  const bundled = !s.FHIR_BASE_URL || s.FHIR_BASE_URL === 'bundled' || (!s.SERVICE_BASE_URL && !s.FHIR_BASE_URL);
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
    privateKeyPath: s.FHIR_PRIVATE_KEY_PATH ? resolve(s.FHIR_PRIVATE_KEY_PATH) : join(dataDir, BUNDLED_FHIR_KEY_FILE),
    ...(s.FHIR_KEY_ID ? { keyId: s.FHIR_KEY_ID } : {}),
    ...(s.FHIR_TOKEN_URL ? { tokenUrl: s.FHIR_TOKEN_URL } : {}),
    ...(s.FHIR_SCOPES.length ? { scopes: s.FHIR_SCOPES } : {}),
  };
}

/** Reads a .env file (KEY=value lines; # comments) without overriding what the environment already has. */
export function readDotEnv(path: string): Record<string, string> {
  if (!existsSync(path)) return {};
  const out: Record<string, string> = {};
  for (const line of readFileSync(path, 'utf8').split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m || line.trimStart().startsWith('#')) continue;
    out[m[1]!] = m[2]!.replace(/^(['"])(.*)\1$/, '$2');
  }
  return out;
}

/**
 * Settings with the secrets' `<NAME>_FILE` files read in, then parsed: throws one ConfigError with every
 * problem of both steps. A secret whose file failed is named once, by that failure (not again as missing).
 */
export function loadConfigFrom(env: Record<string, string | undefined>, readFile: SecretFileReader = readSecretFile): Config {
  const secrets = resolveSecretFiles(env, SECRET_SETTINGS, readFile);
  let config: Config;
  try {
    config = parseConfig(secrets.env);
  } catch (err) {
    if (!(err instanceof ConfigError) || !secrets.problems.length) throw err;
    const followsFromFailed = (problem: string) => secrets.failed.some((name) => problem.startsWith(`${name}:`));
    throw new ConfigError([...secrets.problems, ...err.problems.filter((p) => !followsFromFailed(p))]);
  }
  if (secrets.problems.length) throw new ConfigError(secrets.problems);
  return config;
}

/** The process's settings: .env in the working directory, then the environment, then command-line overrides. */
export function loadConfig(overrides: Record<string, string | undefined> = {}): Config {
  return loadConfigFrom(overlaySettings([readDotEnv(resolve('.env')), process.env, overrides], SECRET_SETTINGS));
}
