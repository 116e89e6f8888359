// Settings: defaults for a zero-configuration start, and a bad or missing setting named in the error.
import { resolve } from 'node:path';
import { emrSettings } from '../src/emr/settings.ts';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.ts';
import { ConfigError } from '../src/errors.ts';

const production = {
  SERVICE_BASE_URL: 'https://service.example.test/',
  SERVICE_API_KEY: 'live_abc',
  SERVICE_KEY_ID: 'key_1',
  SERVICE_SIGNING_SECRETS: 'one, two',
  FHIR_BASE_URL: 'https://emr.example.test/fhir',
  ADMIN_TOKEN: 'a-long-enough-admin-token',
};

function problems(env: Record<string, string>): string[] {
  try {
    parseConfig(env);
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
}

describe('parseConfig', () => {
  it('starts with no settings at all, on the bundled simulator and FHIR server', () => {
    const c = parseConfig({});
    expect(c.bundled).toEqual({ service: true, emr: true });
    expect(c.port).toBe(3000);
    expect(c.webhook.toleranceSeconds).toBe(300);
    expect(emrSettings(c.emr, 'fhir').identifierSystem).toBe('urn:emr-bridge:service');
    expect(c.databasePath).toMatch(/data\/emr-bridge\.db$/);
  });

  it('reads a production configuration, trimming the trailing slash and splitting secrets', () => {
    const c = parseConfig(production);
    expect(c.bundled).toEqual({ service: false, emr: false });
    expect(c.service.baseUrl).toBe('https://service.example.test');
    expect(c.service.signingSecrets).toEqual(['one', 'two']);
  });

  it.each([
    ['PORT', { PORT: 'eighty' }],
    ['PORT', { PORT: '70000' }],
    ['WEBHOOK_TOLERANCE_SECONDS', { WEBHOOK_TOLERANCE_SECONDS: '-5' }],
    ['SERVICE_BASE_URL', { SERVICE_BASE_URL: 'ftp://x' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
    ['ADMIN_TOKEN', { ADMIN_TOKEN: 'short' }],
  ])('names %s when it is malformed', (name, env) => {
    expect(problems(env).join('\n')).toContain(name);
  });

  it('names every setting a real service needs when SERVICE_BASE_URL is set alone', () => {
    const p = problems({ SERVICE_BASE_URL: 'https://service.example.test' }).join('\n');
    for (const name of ['SERVICE_API_KEY', 'SERVICE_KEY_ID', 'SERVICE_SIGNING_SECRETS', 'ADMIN_TOKEN']) expect(p).toContain(name);
  });
});

describe('deployment mode', () => {
  it('refuses one side set without the other, naming the missing setting', () => {
    expect(problems({ ...production, FHIR_BASE_URL: '' }).join('\n')).toMatch(/^FHIR_BASE_URL: required once SERVICE_BASE_URL is set/m);
    const fhirOnly = problems({ FHIR_BASE_URL: 'https://emr.example.test/fhir' }).join('\n');
    expect(fhirOnly).toMatch(/^SERVICE_BASE_URL: required once FHIR_BASE_URL is set/m);
  });

  it('runs a bundled part beside a real one only when asked for by name', () => {
    const c = parseConfig({ SERVICE_BASE_URL: 'bundled', FHIR_BASE_URL: 'https://emr.example.test/fhir' });
    expect(c.bundled).toEqual({ service: true, emr: false });
    expect(c.service.baseUrl).toBeUndefined();
    expect(emrSettings(c.emr, 'fhir').baseUrl).toBe('https://emr.example.test/fhir');
    const d = parseConfig({ ...production, FHIR_BASE_URL: 'bundled' });
    expect(d.bundled).toEqual({ service: false, emr: true });
    expect(emrSettings(d.emr, 'fhir').auth.mode).toBe('smart');
  });

  it('with NODE_ENV=production refuses every bundled part, plain http and a missing admin token', () => {
    expect(parseConfig({ ...production, NODE_ENV: 'production', DATA_KEYS_PATH: '/keys/data-keys.json' }).production).toBe(true);
    const p = problems({
      NODE_ENV: 'production',
      SERVICE_BASE_URL: 'http://service.example.test',
      SERVICE_API_KEY: 'k',
      SERVICE_KEY_ID: 'k',
      SERVICE_SIGNING_SECRETS: 's',
      FHIR_BASE_URL: 'bundled',
    }).join('\n');
    expect(p).toContain('SERVICE_BASE_URL: must be https');
    expect(p).toContain('FHIR_BASE_URL: NODE_ENV=production runs no bundled part');
    expect(p).toContain('ADMIN_TOKEN: required with NODE_ENV=production');
    expect(problems({ NODE_ENV: 'production' }).join('\n')).toContain('SERVICE_BASE_URL: NODE_ENV=production runs no bundled part');
    // Loopback is allowed plain: a sidecar or a tunnel on the same machine.
    expect(
      emrSettings(parseConfig({ ...production, NODE_ENV: 'production', DATA_ENCRYPTION: 'off', FHIR_BASE_URL: 'http://127.0.0.1:8103' }).emr, 'fhir').baseUrl,
    ).toBe('http://127.0.0.1:8103');
  });

  it('stops at a misspelt setting with the closest known name, and leaves orchestrator variables alone', () => {
    expect(problems({ FHIR_BASEURL: 'https://emr.example.test/fhir' })).toContain('FHIR_BASEURL: not a setting of emr-bridge; did you mean FHIR_BASE_URL?');
    expect(problems({ PROCESSOR_MAX_ATTEMPT: '3' }).join('\n')).toContain('did you mean PROCESSOR_MAX_ATTEMPTS?');
    expect(problems({ FHIR_SERVICE_HOST: '10.0.0.1', FHIR_PORT: 'tcp://10.0.0.1:80', HOSTNAME: 'x', npm_config_cache: 'y' })).toEqual([]);
  });

  it('names an invalid PUSHER_SCAN_CRON before anything starts', () => {
    expect(problems({ PUSHER_SCAN_CRON: 'every minute' }).join('\n')).toMatch(/^PUSHER_SCAN_CRON: not a cron expression/m);
  });

  it('keeps the state in PostgreSQL when DATABASE_URL is a postgres:// or postgresql:// URL', () => {
    expect(parseConfig({}).databaseUrl).toBeUndefined();
    expect(parseConfig({ DATABASE_URL: 'postgres://bridge:secret@db.internal:5432/emr' }).databaseUrl).toBe('postgres://bridge:secret@db.internal:5432/emr');
    expect(parseConfig({ DATABASE_URL: 'postgresql://bridge@db/emr?sslmode=require' }).databaseUrl).toBe('postgresql://bridge@db/emr?sslmode=require');
    expect(parseConfig({ DATABASE_URL: 'postgres:///emr?host=/var/run/postgresql' }).databaseUrl).toBe('postgres:///emr?host=/var/run/postgresql');
  });

  it('refuses a DATABASE_URL of another engine, or none at all, without repeating its password', () => {
    const mysql = problems({ DATABASE_URL: 'mysql://bridge:hunter2-secret@db/emr' }).join('\n');
    expect(mysql).toContain('DATABASE_URL: only PostgreSQL is supported (postgres:// or postgresql://), not mysql://');
    expect(mysql).not.toContain('hunter2-secret');
    expect(problems({ DATABASE_URL: 'db.internal:5432/emr' }).join('\n')).toMatch(/^DATABASE_URL: (not a URL|only PostgreSQL)/m);
    expect(problems({ DATABASE_URL: 'not a url' }).join('\n')).toContain('DATABASE_URL: not a URL');
    expect(problems({ DATABASE_URL: 'postgres:///emr' }).join('\n')).toContain('DATABASE_URL: names no host');
  });

  it('refuses DATABASE_PATH beside DATABASE_URL rather than leave one silently unused', () => {
    expect(problems({ DATABASE_URL: 'postgres://db/emr', DATABASE_PATH: './state.db' })).toContain(
      'DATABASE_PATH: the state is in PostgreSQL once DATABASE_URL is set; unset one of the two',
    );
  });

  it('refuses a lease that a call made under it could outlast, naming both settings', () => {
    expect(problems({ PUSHER_LEASE_MS: '15000' })).toEqual([
      'PUSHER_LEASE_MS: must be at least twice SERVICE_TIMEOUT_MS (15000 < 2 x 10000): a send starts only while half its lease is left, and a call to the service may take SERVICE_TIMEOUT_MS; raise PUSHER_LEASE_MS or lower SERVICE_TIMEOUT_MS',
    ]);
    expect(problems({ PROCESSOR_LEASE_MS: '60000', FHIR_TIMEOUT_MS: '30001' })).toEqual([
      'PROCESSOR_LEASE_MS: must be at least twice FHIR_TIMEOUT_MS (60000 < 2 x 30001): an event is applied under its lease, and one FHIR call may take FHIR_TIMEOUT_MS; raise PROCESSOR_LEASE_MS or lower FHIR_TIMEOUT_MS',
    ]);
    // Exactly twice is enough; the defaults (60 s leases, 10 s timeouts) pass.
    expect(problems({ PUSHER_LEASE_MS: '20000', PROCESSOR_LEASE_MS: '20000' })).toEqual([]);
    expect(problems({ PUSHER_LEASE_MS: '1000', SERVICE_TIMEOUT_MS: '500', PROCESSOR_LEASE_MS: '1000', FHIR_TIMEOUT_MS: '500' })).toEqual([]);
  });

  it("checks for a tool (migrate, backup) only the settings it uses: lease and deployment rules are serve's", () => {
    const unusedByTools = { PROCESSOR_LEASE_MS: '1000', FHIR_TIMEOUT_MS: '10000', SERVICE_BASE_URL: 'https://service.example.test' };
    expect(() => parseConfig(unusedByTools)).toThrow(/PROCESSOR_LEASE_MS: must be at least twice FHIR_TIMEOUT_MS/);
    expect(() => parseConfig(unusedByTools)).toThrow(/FHIR_BASE_URL: required once SERVICE_BASE_URL is set/);
    expect(parseConfig({ ...unusedByTools, DATA_DIR: '/srv/emr' }, 'tools').databasePath).toBe('/srv/emr/emr-bridge.db');
    // A setting's form is still checked, and a typo still stops a tool.
    expect(() => parseConfig({ PROCESSOR_LEASE_MS: 'soon' }, 'tools')).toThrow(/PROCESSOR_LEASE_MS/);
    expect(() => parseConfig({ DATABASE_PAHT: '/srv/emr.db' }, 'tools')).toThrow(/DATABASE_PAHT: not a setting/);
  });

  it('puts the admin API on its own listener only when ADMIN_PORT or ADMIN_HOST is set', () => {
    expect(parseConfig({}).admin).toBeUndefined();
    expect(parseConfig({ ADMIN_PORT: '9091', ADMIN_HOST: '10.1.2.3' }).admin).toEqual({ host: '10.1.2.3', port: 9091 });
  });
});

describe('patient data at rest (DATA_KEYS_PATH, DATA_KEYS_COMMAND, DATA_ENCRYPTION)', () => {
  const inProduction = { ...production, NODE_ENV: 'production' };

  it('seals under a key generated in the data folder when nothing is configured', () => {
    expect(parseConfig({ DATA_DIR: '/srv/emr' }).dataKeys).toEqual({ encryption: 'on', source: { kind: 'generated', path: '/srv/emr/data-keys.json' } });
  });

  it('seals under the key file DATA_KEYS_PATH names, as an absolute path', () => {
    expect(parseConfig({ ...production, DATA_KEYS_PATH: '/etc/emr-bridge/data-keys.json' }).dataKeys).toEqual({
      encryption: 'on',
      source: { kind: 'path', path: '/etc/emr-bridge/data-keys.json' },
    });
    expect(parseConfig({ DATA_KEYS_PATH: 'keys.json' }).dataKeys.source).toEqual({ kind: 'path', path: resolve('keys.json') });
  });

  it('seals under the key file DATA_KEYS_COMMAND prints', () => {
    expect(parseConfig({ ...production, DATA_KEYS_COMMAND: 'vault kv get -field=keys secret/emr-bridge' }).dataKeys).toEqual({
      encryption: 'on',
      source: { kind: 'command', command: 'vault kv get -field=keys secret/emr-bridge' },
    });
  });

  it('writes in clear with DATA_ENCRYPTION=off, keeping a given key source to open older values', () => {
    expect(parseConfig({ DATA_ENCRYPTION: 'off' }).dataKeys).toEqual({ encryption: 'off', source: { kind: 'none' }, clearBecause: 'DATA_ENCRYPTION=off' });
    expect(parseConfig({ DATA_ENCRYPTION: 'off', DATA_KEYS_PATH: '/k.json' }).dataKeys).toEqual({
      encryption: 'off',
      source: { kind: 'path', path: '/k.json' },
    });
  });

  it('refuses DATA_KEYS_PATH and DATA_KEYS_COMMAND together, for a tool too', () => {
    const both = { DATA_KEYS_PATH: '/k.json', DATA_KEYS_COMMAND: 'cat /k.json' };
    expect(problems(both)).toEqual([expect.stringMatching(/^DATA_KEYS_COMMAND: not together with DATA_KEYS_PATH/)]);
    expect(() => parseConfig(both, 'tools')).toThrow(/DATA_KEYS_COMMAND: not together with DATA_KEYS_PATH/);
  });

  it('refuses DATA_ENCRYPTION other than on or off', () => {
    expect(problems({ DATA_ENCRYPTION: 'yes' }).join('\n')).toMatch(/^DATA_ENCRYPTION: must be on or off/m);
  });

  it('with NODE_ENV=production refuses to start with no data key unless DATA_ENCRYPTION=off is set, naming the settings', () => {
    const p = problems(inProduction);
    expect(p).toHaveLength(1);
    for (const name of ['DATA_KEYS_PATH', 'DATA_KEYS_COMMAND', 'DATA_ENCRYPTION=off']) expect(p[0]).toContain(name);
    expect(problems({ ...inProduction, DATA_ENCRYPTION: 'on' })).toEqual(p);
    expect(parseConfig({ ...inProduction, DATA_ENCRYPTION: 'off' }).dataKeys).toEqual({
      encryption: 'off',
      source: { kind: 'none' },
      clearBecause: 'DATA_ENCRYPTION=off',
    });
    expect(parseConfig({ ...inProduction, DATA_KEYS_COMMAND: 'cat /run/secrets/data-keys' }).dataKeys.encryption).toBe('on');
  });

  it('lets a tool (migrate, backup) run in production without a data key', () => {
    expect(parseConfig(inProduction, 'tools').dataKeys.source).toEqual({ kind: 'none' });
  });

  it('generates no key for replicas sharing PostgreSQL: they write in clear unless given a key they all share', () => {
    const replicas = { DATABASE_URL: 'postgres://bridge@db.internal/emr' };
    expect(parseConfig(replicas).dataKeys).toEqual({
      encryption: 'off',
      source: { kind: 'none' },
      clearBecause: expect.stringMatching(/^replicas on PostgreSQL share no data key/),
    });
    expect(problems({ ...replicas, DATA_ENCRYPTION: 'on' })).toEqual([expect.stringMatching(/^DATA_ENCRYPTION: on needs a data key every replica shares/)]);
    expect(parseConfig({ ...replicas, DATA_KEYS_PATH: '/k.json' }).dataKeys.encryption).toBe('on');
  });
});

describe('FHIR sign-in settings', () => {
  const real = { ...production };
  it('signs in to a configured EMR with nothing by default, and to the bundled one with SMART', () => {
    expect(emrSettings(parseConfig(real).emr, 'fhir').auth).toEqual({ mode: 'none' });
    expect(emrSettings(parseConfig({}).emr, 'fhir').auth).toMatchObject({
      mode: 'smart',
      clientId: 'emr-bridge',
      privateKeyPath: expect.stringMatching(/fhir-client-key\.pem$/),
    });
  });

  it('names what each mode needs', () => {
    expect(problems({ ...real, FHIR_AUTH: 'bearer' }).join('\n')).toContain('FHIR_BEARER_TOKEN: required when FHIR_AUTH is bearer');
    const smart = problems({ ...real, FHIR_AUTH: 'smart' }).join('\n');
    expect(smart).toContain('FHIR_CLIENT_ID: required when FHIR_AUTH is smart');
    expect(smart).toContain('FHIR_PRIVATE_KEY_PATH: required when FHIR_AUTH is smart');
    expect(problems({ ...real, FHIR_AUTH: 'oauth' }).join('\n')).toContain('FHIR_AUTH');
  });

  it('reads a complete smart configuration, scopes split on spaces', () => {
    const c = parseConfig({
      ...real,
      FHIR_AUTH: 'smart',
      FHIR_CLIENT_ID: 'bridge-1',
      FHIR_PRIVATE_KEY_PATH: '/keys/k.pem',
      FHIR_TOKEN_URL: 'https://emr.example.test/oauth2/token',
      FHIR_SCOPES: 'system/Patient.rs  system/Appointment.cru',
    });
    expect(emrSettings(c.emr, 'fhir').auth).toEqual({
      mode: 'smart',
      clientId: 'bridge-1',
      privateKeyPath: '/keys/k.pem',
      tokenUrl: 'https://emr.example.test/oauth2/token',
      scopes: ['system/Patient.rs', 'system/Appointment.cru'],
    });
  });
});

describe("the bundled FHIR server's profile (FHIR_SERVER_PROFILE)", () => {
  const fhir = (env: Record<string, string>) => emrSettings(parseConfig(env).emr, 'fhir');

  it('runs the default profile, creating appointments, when unset', () => {
    expect(fhir({})).toMatchObject({ serverProfile: 'default', booking: 'create' });
  });

  it('books into Slots beside the vendor profile, asking for the Slot search scope too; an explicit FHIR_APPOINTMENT_BOOKING still wins', () => {
    expect(fhir({ FHIR_SERVER_PROFILE: 'vendor' })).toMatchObject({ serverProfile: 'vendor', booking: 'slot', auth: { addedScopes: ['system/Slot.rs'] } });
    expect(fhir({ FHIR_SERVER_PROFILE: 'vendor', FHIR_APPOINTMENT_BOOKING: 'create' })).toMatchObject({ serverProfile: 'vendor', booking: 'create' });
    expect(fhir({ FHIR_SERVER_PROFILE: 'vendor', FHIR_SCOPES: 'system/*.cruds' }).auth).toMatchObject({ scopes: ['system/*.cruds'] });
    expect(fhir({ FHIR_SERVER_PROFILE: 'vendor', FHIR_SCOPES: 'system/*.cruds' }).auth).not.toHaveProperty('addedScopes');
  });

  it('takes it with FHIR_BASE_URL=bundled, and refuses it beside an EMR of its own, or a profile that does not exist', () => {
    expect(fhir({ ...production, FHIR_BASE_URL: 'bundled', FHIR_SERVER_PROFILE: 'vendor' }).serverProfile).toBe('vendor');
    expect(problems({ ...production, FHIR_SERVER_PROFILE: 'vendor' })).toContain(
      'FHIR_SERVER_PROFILE: only for the bundled FHIR server; FHIR_BASE_URL names an EMR of its own (unset it, or set it to `bundled`)',
    );
    expect(problems({ FHIR_SERVER_PROFILE: 'oracle' })).toEqual(['FHIR_SERVER_PROFILE: must be default or vendor']);
  });
});

describe('the documented settings', () => {
  it('docs/settings.md and .env.example name every setting, and the settings table names none that does not exist', async () => {
    const { readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { SETTING_NAMES } = await import('../src/config.ts');
    const { PACKAGE_ROOT } = await import('../src/paths.ts');
    const reference = readFileSync(join(PACKAGE_ROOT, 'docs', 'settings.md'), 'utf8');
    const example = readFileSync(join(PACKAGE_ROOT, '.env.example'), 'utf8');
    for (const name of SETTING_NAMES) {
      expect(reference, name).toContain(`\`${name}\``);
      expect(example, name).toMatch(new RegExp(`^#?${name}=`, 'm'));
    }
    const tableNames = [...reference.matchAll(/^\| `([A-Z][A-Z0-9_]+)`(?:, `([A-Z][A-Z0-9_]+)`)? \|/gm)].flatMap(
      (m) => [m[1]!, m[2]].filter(Boolean) as string[],
    );
    expect(tableNames.filter((n) => !SETTING_NAMES.includes(n))).toEqual([]);
  });
});
