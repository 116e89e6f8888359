// Every setting of emr-bridge, read from the environment (and a .env file) once at start-up and checked
// with zod. This is the only module that reads process.env; everything else receives a Config.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import cron from 'node-cron';
import { z } from 'zod';
import { baseUrlOrBundled, csv, int, isLoopback } from './config-schema.ts';
import { DEFAULT_TOLERANCE_SECONDS } from './contract/api.ts';
import { unknownSettings } from './config-names.ts';
import { fileSetting, overlaySettings, readSecretFile, resolveSecretFiles, type SecretFileReader } from './config-secrets.ts';
import type { EmrAddressSetting, EmrSettingsContext } from './emr/settings-context.ts';
import { EMR_PROTOCOLS, EMR_SETTINGS, EMR_SETTINGS_SHAPE, type EmrConfig, emrCallTimeout, parseEmrConfig } from './emr/settings.ts';
import { ConfigError } from './errors.ts';
import { DATA_KEYS_SETTINGS_SHAPE, type DataKeysSettings, dataKeysFrom } from './sealing/settings.ts';
import { type DowntimeWindow, parseDowntimeWindows } from './work/downtime-windows.ts';
import { isOpenTelemetryVariable, OTEL_VARIABLE_NAMES } from './tracing/otel-variables.ts';
import { TRACING_SECRET_SETTINGS, TRACING_SETTINGS_SHAPE, type TracingSettings, tracingFrom } from './tracing/settings.ts';

/**
 * The largest WEBHOOK_MAX_BODY_BYTES may be: a quarantined webhook larger than this could never be applied, so the
 * receiver reads no further than this (src/receiver/quarantine-intake.ts) and answers 413.
 */
export const WEBHOOK_BODY_CEILING = 16 * 1024 * 1024;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

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
  WEBHOOK_TOLERANCE_SECONDS: int(DEFAULT_TOLERANCE_SECONDS, 1, 86_400),
  WEBHOOK_MAX_BODY_BYTES: int(256 * 1024, 1024, WEBHOOK_BODY_CEILING),
  // Signed webhooks over WEBHOOK_MAX_BODY_BYTES are kept (sealed) up to this many stored bytes in all; 0: refused (413).
  WEBHOOK_QUARANTINE_BYTES: int(256 * 1024 * 1024, 0, 64 * 1024 * 1024 * 1024),
  // The EMR module (src/emr/settings.ts); its own settings follow from EMR_SETTINGS_SHAPE.
  EMR_PROTOCOL: z.enum(EMR_PROTOCOLS).default('fhir'),
  // Planned EMR downtime (src/work/downtime-windows.ts): `;`-separated `<cron>@<IANA zone>/<ISO 8601 duration>`.
  EMR_DOWNTIME: z.string().optional(),
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
  // Events in flight at once; unset: EMR_MAX_CONCURRENCY, so every EMR call the limit allows has an event to make it.
  PROCESSOR_CONCURRENCY: z.coerce.number().int().min(1).max(256).optional(),
  // The most EMR calls in flight at once (the adaptive limit's ceiling, and the FHIR client's connections).
  EMR_MAX_CONCURRENCY: int(32, 1, 256),
  // The most calls to the service in flight at once (mapping posts).
  SERVICE_MAX_CONCURRENCY: int(16, 1, 256),
  // Patient data at rest (src/sealing/settings.ts): where the data keys come from, and whether new values are sealed.
  ...DATA_KEYS_SETTINGS_SHAPE,
  // Traces (src/tracing/settings.ts): the standard OpenTelemetry variables; no endpoint, no tracing. The
  // specification's others are no settings: src/tracing/tuning.ts reads those that tune traces, the rest are ignored.
  ...TRACING_SETTINGS_SHAPE,
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
  ...EMR_SETTINGS_SHAPE,
});

/** `serve` checks every rule; `tools` (migrate, backup, the admin commands) the settings' forms and storage only. */
export type ConfigScope = 'serve' | 'tools';

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
  ...TRACING_SECRET_SETTINGS,
] as const satisfies readonly (keyof RawSettings)[];
const SECRET_FILE_SETTINGS: readonly string[] = SECRET_SETTINGS.map(fileSetting);

export type { FhirAuthConfig } from './emr/fhir/settings.ts';
export { BUNDLED_FHIR_CLIENT_ID, BUNDLED_FHIR_KEY_FILE } from './emr/fhir/settings.ts';
export type { EmrConfig } from './emr/settings.ts';
export type { DataKeySource, DataKeysSettings } from './sealing/settings.ts';
export type { TracingSettings } from './tracing/settings.ts';

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
    /** SERVICE_MAX_CONCURRENCY: calls to the service in flight at once (mapping posts). */
    maxConcurrency: number;
  };
  /** quarantineBytes: WEBHOOK_QUARANTINE_BYTES, the room of the quarantine of signed webhooks over maxBodyBytes (0: none). */
  webhook: { toleranceSeconds: number; maxBodyBytes: number; quarantineBytes: number };
  /** EMR_PROTOCOL and the chosen module's own settings (src/emr/settings.ts). */
  emr: EmrConfig;
  /** EMR_DOWNTIME: the EMR's planned downtime windows (none: only what operators set through the admin API). */
  emrDowntime: readonly DowntimeWindow[];
  /** EMR_MAX_CONCURRENCY: the most EMR calls in flight at once (src/work/adaptive-limit.ts lowers it while the EMR pushes back). */
  emrMaxConcurrency: number;
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
    /** Events in flight at once (PROCESSOR_CONCURRENCY, by default EMR_MAX_CONCURRENCY). */
    concurrency: number;
  };
  /**
   * DATA_KEYS_PATH, DATA_KEYS_COMMAND, DATA_ENCRYPTION: where the keys that seal patient data at rest come from
   * (read at start by src/sealing/load.ts) and whether new values are sealed.
   */
  dataKeys: DataKeysSettings;
  /** OTEL_*: where spans go (OTLP over HTTP) and which are sampled; absent: no endpoint, no tracing at all. */
  tracing?: TracingSettings;
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
   * Which parts run bundled: both when neither SERVICE_BASE_URL nor the EMR's address (FHIR_BASE_URL) is set
   * (`npm start` on a fresh machine); otherwise only a side whose setting says `bundled`.
   */
  bundled: { service: boolean; emr: boolean };
}

/**
 * Parses settings; throws ConfigError naming every bad setting. Pure: give it any record of strings. It reads
 * no file: `<NAME>_FILE` settings are read before it (loadConfigFrom), and refused here if still unread.
 */
export function parseConfig(env: Record<string, string | undefined>, scope: ConfigScope = 'serve'): Config {
  // An empty value means unset, as in `SERVICE_BASE_URL= npm start`.
  const given = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ''));
  const parsed = schema.safeParse(given);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.') || '(settings)'}: ${i.message}`));
  }
  const s = parsed.data;
  const problems: string[] = unknownSettings(given as Record<string, string>, SETTING_NAMES, {
    isForeign: isOpenTelemetryVariable,
    names: OTEL_VARIABLE_NAMES,
  });
  for (const name of SECRET_FILE_SETTINGS.filter((n) => n in given))
    problems.push(`${name}: files are read by loadConfig/loadConfigFrom, not parseConfig; pass the value itself`);
  const emrAddress = EMR_SETTINGS[s.EMR_PROTOCOL].address;
  const rules: string[] = [];
  const bundled = deploymentProblems(s, emrAddress, rules);
  databaseProblems(s, problems);
  if (s.ADMIN_TOKEN !== undefined && s.ADMIN_TOKEN.length < 16) problems.push('ADMIN_TOKEN: must be at least 16 characters');
  if (s.RETENTION_AUDIT_DAYS < s.RETENTION_EVENT_ID_DAYS)
    problems.push('RETENTION_AUDIT_DAYS: must not be below RETENTION_EVENT_ID_DAYS (the audit trail outlives the events it names)');
  if (s.PROCESSOR_BACKOFF_MAX_MS < s.PROCESSOR_BACKOFF_BASE_MS) problems.push('PROCESSOR_BACKOFF_MAX_MS: must not be below PROCESSOR_BACKOFF_BASE_MS');
  if (s.PUSHER_BACKOFF_MAX_MS < s.PUSHER_BACKOFF_BASE_MS) problems.push('PUSHER_BACKOFF_MAX_MS: must not be below PUSHER_BACKOFF_BASE_MS');
  const downtime = parseDowntimeWindows(s.EMR_DOWNTIME);
  for (const p of downtime.problems) problems.push(`EMR_DOWNTIME: ${p}`);
  const dataDir = resolve(s.DATA_DIR);
  const production = s.NODE_ENV === 'production';
  const emr = emrConfigFrom(s, { dataDir, host: s.HOST, adapterPort: s.PORT, production, bundled: bundled.emr, isLoopback }, rules);
  const dataKeys = dataKeysFrom(s, { dataDir, production, sharedDatabase: Boolean(s.DATABASE_URL) }, problems, rules);
  const tracing = tracingFrom(s, { production, given }, problems);
  leaseProblems(s, emr, rules);
  // The deployment and lease rules are the adapter's: a tool (migrate, backup) needs the storage settings only.
  if (scope === 'serve') problems.push(...rules);
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
      maxConcurrency: s.SERVICE_MAX_CONCURRENCY,
    },
    webhook: { toleranceSeconds: s.WEBHOOK_TOLERANCE_SECONDS, maxBodyBytes: s.WEBHOOK_MAX_BODY_BYTES, quarantineBytes: s.WEBHOOK_QUARANTINE_BYTES },
    emr,
    emrDowntime: downtime.windows,
    emrMaxConcurrency: s.EMR_MAX_CONCURRENCY,
    ...(s.ADMIN_TOKEN ? { adminToken: s.ADMIN_TOKEN } : {}),
    ...(s.ADMIN_CREDENTIALS_FILE ? { adminCredentialsFile: resolve(s.ADMIN_CREDENTIALS_FILE) } : {}),
    adminMaxBodyBytes: s.ADMIN_MAX_BODY_BYTES,
    console: { sessionMinutes: s.CONSOLE_SESSION_MINUTES },
    ...(s.ADMIN_PORT !== undefined || s.ADMIN_HOST ? { admin: { host: s.ADMIN_HOST ?? s.HOST, port: s.ADMIN_PORT ?? 0 } } : {}),
    production,
    logLevel: s.LOG_LEVEL,
    processor: {
      maxAttempts: s.PROCESSOR_MAX_ATTEMPTS,
      backoffBaseMs: s.PROCESSOR_BACKOFF_BASE_MS,
      backoffMaxMs: s.PROCESSOR_BACKOFF_MAX_MS,
      leaseMs: s.PROCESSOR_LEASE_MS,
      pollMs: s.PROCESSOR_POLL_MS,
      concurrency: s.PROCESSOR_CONCURRENCY ?? s.EMR_MAX_CONCURRENCY,
    },
    dataKeys,
    ...(tracing ? { tracing } : {}),
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

/**
 * The deployment rules: which parts are bundled, and that none is by accident. With nothing set, both are
 * (zero configuration). Once one side is set, the other must be too, to an address or to `bundled`; in
 * production nothing is bundled, addresses are https (loopback excepted) and the admin token is set. The EMR's
 * side is the chosen module's address setting (FHIR_BASE_URL); its other production rules are the module's.
 */
function deploymentProblems(s: z.output<typeof schema>, emr: EmrAddressSetting, problems: string[]): Config['bundled'] {
  const emrAddress = (s as Record<string, unknown>)[emr.name] as string | undefined;
  const zeroConfiguration = !s.SERVICE_BASE_URL && !emrAddress;
  const bundled = { service: zeroConfiguration || s.SERVICE_BASE_URL === 'bundled', emr: zeroConfiguration || emrAddress === 'bundled' };
  if (!zeroConfiguration) {
    if (!s.SERVICE_BASE_URL)
      problems.push(`SERVICE_BASE_URL: required once ${emr.name} is set (the service's address, or \`bundled\` for the bundled simulator)`);
    if (!emrAddress) problems.push(`${emr.name}: required once SERVICE_BASE_URL is set (${emr.what}, or \`bundled\` for ${emr.bundledPart})`);
  }
  if (s.SERVICE_BASE_URL && !bundled.service) {
    if (!s.SERVICE_API_KEY) problems.push('SERVICE_API_KEY: required when SERVICE_BASE_URL is set');
    if (!s.SERVICE_KEY_ID) problems.push('SERVICE_KEY_ID: required when SERVICE_BASE_URL is set');
    if (s.SERVICE_SIGNING_SECRETS.length === 0) problems.push('SERVICE_SIGNING_SECRETS: at least one secret is required when SERVICE_BASE_URL is set');
    if (!s.ADMIN_TOKEN) problems.push('ADMIN_TOKEN: required (at least 16 characters) when SERVICE_BASE_URL is set');
  }
  if (s.NODE_ENV === 'production') {
    if (bundled.service) problems.push("SERVICE_BASE_URL: NODE_ENV=production runs no bundled part; set the service's https address");
    if (bundled.emr) problems.push(`${emr.name}: NODE_ENV=production runs no bundled part; set ${emr.what.replace(/^the EMR's /, "the EMR's https ")}`);
    const url = s.SERVICE_BASE_URL;
    if (url && url !== 'bundled' && !url.startsWith('https://') && !isLoopback(url))
      problems.push('SERVICE_BASE_URL: must be https with NODE_ENV=production (loopback excepted)');
    if (!s.ADMIN_TOKEN) problems.push('ADMIN_TOKEN: required with NODE_ENV=production (never generated)');
  }
  return bundled;
}

/** EMR_PROTOCOL's module reads its own settings (src/emr/settings.ts); the others' are checked for form only. */
function emrConfigFrom(s: z.output<typeof schema>, ctx: EmrSettingsContext, problems: string[]): EmrConfig {
  return parseEmrConfig(s.EMR_PROTOCOL, s, ctx, problems);
}

/**
 * A lease must outlast the calls made under it: once it runs out, another replica (or this process after a
 * restart) may take the work over while the call is still under way. A document send starts only while half
 * its lease is left (src/pusher/send.ts), so no document is sent twice while its sender lives only if a call
 * to the service ends within that half. An event is applied under its lease through FHIR calls, so a lease
 * shorter than two of them would let another replica apply the entity's next event before this call lands.
 */
function leaseProblems(s: z.output<typeof schema>, emr: EmrConfig, problems: string[]): void {
  if (s.PUSHER_LEASE_MS < 2 * s.SERVICE_TIMEOUT_MS)
    problems.push(
      `PUSHER_LEASE_MS: must be at least twice SERVICE_TIMEOUT_MS (${s.PUSHER_LEASE_MS} < 2 x ${s.SERVICE_TIMEOUT_MS}): a send starts only while half its lease is left, and a call to the service may take SERVICE_TIMEOUT_MS; raise PUSHER_LEASE_MS or lower SERVICE_TIMEOUT_MS`,
    );
  const call = emrCallTimeout(emr);
  if (s.PROCESSOR_LEASE_MS < 2 * call.ms)
    problems.push(
      `PROCESSOR_LEASE_MS: must be at least twice ${call.setting} (${s.PROCESSOR_LEASE_MS} < 2 x ${call.ms}): an event is applied under its lease, and ${call.what} may take ${call.setting}; raise PROCESSOR_LEASE_MS or lower ${call.setting}`,
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
export function loadConfigFrom(env: Record<string, string | undefined>, readFile: SecretFileReader = readSecretFile, scope: ConfigScope = 'serve'): Config {
  const secrets = resolveSecretFiles(env, SECRET_SETTINGS, readFile);
  let config: Config;
  try {
    config = parseConfig(secrets.env, scope);
  } catch (err) {
    if (!(err instanceof ConfigError) || !secrets.problems.length) throw err;
    const followsFromFailed = (problem: string) => secrets.failed.some((name) => problem.startsWith(`${name}:`));
    throw new ConfigError([...secrets.problems, ...err.problems.filter((p) => !followsFromFailed(p))]);
  }
  if (secrets.problems.length) throw new ConfigError(secrets.problems);
  return config;
}

/** The process's settings: .env in the working directory, then the environment, then command-line overrides. */
export function loadConfig(overrides: Record<string, string | undefined> = {}, scope: ConfigScope = 'serve'): Config {
  return loadConfigFrom(overlaySettings([readDotEnv(resolve('.env')), process.env, overrides], SECRET_SETTINGS), readSecretFile, scope);
}
