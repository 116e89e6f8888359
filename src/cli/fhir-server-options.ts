// The `emr-bridge fhir-server` options beyond the port: sign-in (`--auth`, `--client`, `--token-lifetime`),
// the bind address and the profile (`--profile`), checked into FhirServerOptions and the clients to register at start.
import { readFileSync } from 'node:fs';
import { UsageError } from './args.ts';
import type { FhirServerOptions } from '../fhir-server/server.ts';

export interface FhirServerCliValues {
  auth?: string | undefined;
  client?: string[] | undefined;
  'token-lifetime'?: string | undefined;
  host?: string | undefined;
  'no-transactions'?: boolean | undefined;
  'no-conditional-create'?: boolean | undefined;
  profile?: string | undefined;
}

export interface StartupClient {
  clientId: string;
  jwks: { keys: object[] };
}

export interface FhirServerCliOptions {
  host: string;
  auth?: NonNullable<FhirServerOptions['auth']>;
  clients: StartupClient[];
  profile: NonNullable<FhirServerOptions['profile']>;
}

function profileOf(value: string | undefined): 'default' | 'vendor' {
  if (value === undefined || value === 'default' || value === 'vendor') return value ?? 'default';
  throw new UsageError(`--profile must be default or vendor, got ${value}`);
}

function authMode(value: string | undefined): 'none' | 'smart' {
  if (value === undefined || value === 'none' || value === 'smart') return value ?? 'none';
  throw new UsageError(`--auth must be none or smart, got ${value}`);
}

function tokenLifetime(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,6}$/.test(value) || Number(value) < 1) throw new UsageError(`--token-lifetime must be a whole number of seconds (1 or more), got ${value}`);
  return Number(value);
}

function readJwks(path: string): { keys: object[] } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new UsageError(`--client: cannot read a JWKS from ${path}: ${(err as Error).message}`);
  }
  const keys = (parsed as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0) throw new UsageError(`--client: ${path} must hold {"keys": [...]}`);
  return { keys: keys as object[] };
}

function startupClient(value: string): StartupClient {
  const at = value.indexOf('=');
  if (at <= 0 || at === value.length - 1) throw new UsageError(`--client must be <clientId>=<JWKS file>, got ${value}`);
  return { clientId: value.slice(0, at), jwks: readJwks(value.slice(at + 1)) };
}

export function fhirServerCliOptions(values: FhirServerCliValues): FhirServerCliOptions {
  const profile = profileOf(values.profile);
  const smart = authMode(values.auth) === 'smart';
  const lifetime = tokenLifetime(values['token-lifetime']);
  const clientArgs = values.client ?? [];
  if (!smart && (clientArgs.length > 0 || lifetime !== undefined)) throw new UsageError('--client and --token-lifetime need --auth smart');
  const host = values.host ?? '127.0.0.1';
  if (host === '') throw new UsageError('--host must not be empty');
  return {
    host,
    ...(smart ? { auth: lifetime === undefined ? {} : { tokenLifetimeSeconds: lifetime } } : {}),
    clients: clientArgs.map(startupClient),
    profile,
  };
}
