// Secrets from files (src/config-secrets.ts and its use in src/config.ts): every `<NAME>_FILE` read in as NAME,
// its conflicts and unreadable files named without the secret, one trailing newline dropped, the unknown-setting
// check, the .env/environment precedence, and the CLI commands (backup, migrate) reading them alike.
import { emrSettings } from '../src/emr/settings.ts';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { POSTGRES_REFUSAL } from '../src/cli/backup.ts';
import { main } from '../src/cli/main.ts';
import { type Config, loadConfigFrom, parseConfig, SECRET_SETTINGS, SETTING_NAMES } from '../src/config.ts';
import { overlaySettings, resolveSecretFiles } from '../src/config-secrets.ts';
import { ConfigError } from '../src/errors.ts';
import { captureOutput } from './support/captured-output.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'emr-bridge-secrets-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

let files = 0;
/** A new file in the temporary folder holding `content`; its path. */
function secretFile(content: string): string {
  const path = join(dir, `secret-${++files}`);
  writeFileSync(path, content);
  return path;
}

function problems(env: Record<string, string>): string[] {
  try {
    loadConfigFrom(env);
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
}

const real = {
  SERVICE_BASE_URL: 'https://service.example.test',
  SERVICE_API_KEY: 'live_abc',
  SERVICE_KEY_ID: 'key_1',
  SERVICE_SIGNING_SECRETS: 'one,two',
  FHIR_BASE_URL: 'https://emr.example.test/fhir',
  ADMIN_TOKEN: 'a-long-enough-admin-token',
};
const without = (name: string): Record<string, string> => Object.fromEntries(Object.entries(real).filter(([k]) => k !== name));

/** Per secret: a valid value, the settings it is valid beside, and where the Config holds it. */
const SECRETS: { name: (typeof SECRET_SETTINGS)[number]; value: string; beside: Record<string, string>; read: (c: Config) => unknown; expected: unknown }[] = [
  {
    name: 'DATABASE_URL',
    value: 'postgres://bridge:file-password-1@db.internal:5432/emr',
    beside: real,
    read: (c) => c.databaseUrl,
    expected: 'postgres://bridge:file-password-1@db.internal:5432/emr',
  },
  { name: 'SERVICE_API_KEY', value: 'live_from_a_file_2', beside: without('SERVICE_API_KEY'), read: (c) => c.service.apiKey, expected: 'live_from_a_file_2' },
  {
    name: 'SERVICE_SIGNING_SECRETS',
    value: 'whsec_file_3a, whsec_file_3b',
    beside: without('SERVICE_SIGNING_SECRETS'),
    read: (c) => c.service.signingSecrets,
    expected: ['whsec_file_3a', 'whsec_file_3b'],
  },
  {
    name: 'FHIR_BEARER_TOKEN',
    value: 'bearer-from-a-file-4',
    beside: { ...real, FHIR_AUTH: 'bearer' },
    read: (c) => emrSettings(c.emr, 'fhir').auth,
    expected: { mode: 'bearer', token: 'bearer-from-a-file-4' },
  },
  { name: 'ADMIN_TOKEN', value: 'admin-token-from-a-file-5', beside: without('ADMIN_TOKEN'), read: (c) => c.adminToken, expected: 'admin-token-from-a-file-5' },
  {
    name: 'OTEL_EXPORTER_OTLP_HEADERS',
    value: 'x-honeycomb-team=key-from-a-file-6',
    beside: { ...real, OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example.test' },
    read: (c) => c.tracing?.headers,
    expected: { 'x-honeycomb-team': 'key-from-a-file-6' },
  },
  {
    name: 'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
    value: 'authorization=Bearer from-a-file-7',
    beside: { ...real, OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example.test' },
    read: (c) => c.tracing?.headers,
    expected: { authorization: 'Bearer from-a-file-7' },
  },
];

describe('the secret settings', () => {
  it('are every secret value of the settings, and each has a documented _FILE variant beside it', () => {
    expect([...SECRET_SETTINGS].sort()).toEqual(SECRETS.map((s) => s.name).sort());
    for (const name of SECRET_SETTINGS) expect(SETTING_NAMES).toContain(`${name}_FILE`);
    // A path already, not a secret: no FHIR_PRIVATE_KEY_PATH_FILE.
    expect(SETTING_NAMES).not.toContain('FHIR_PRIVATE_KEY_PATH_FILE');
  });
});

describe.each(SECRETS.map((s) => ({ ...s, fileName: `${s.name}_FILE` })))('$fileName', ({ name, fileName, value, beside, read, expected }) => {
  it('uses the file content as the setting', () => {
    const config = loadConfigFrom({ ...beside, [fileName]: secretFile(`${value}\n`) });
    expect(read(config)).toEqual(expected);
  });

  it('reads the same Config as the variable itself', () => {
    expect(loadConfigFrom({ ...beside, [fileName]: secretFile(value) })).toEqual(parseConfig({ ...beside, [name]: value }));
  });

  it('refuses NAME and NAME_FILE together, naming both and neither value', () => {
    const path = secretFile('file-secret-content');
    const p = problems({ ...beside, [name]: value, [fileName]: path });
    expect(p).toEqual([`${name}, ${fileName}: both are set; set one of the two (${fileName} holds the path of a file with the value)`]);
    expect(p.join('\n')).not.toContain('file-secret-content');
    expect(p.join('\n')).not.toContain(value);
  });

  it('stops at a missing file, naming the setting and the path, and not again as a missing setting', () => {
    const path = join(dir, 'no-such-file');
    expect(problems({ ...beside, [fileName]: path })).toEqual([`${fileName}: cannot read ${path}: no such file`]);
  });

  it('stops at an empty file', () => {
    const path = secretFile('');
    expect(problems({ ...beside, [fileName]: path })).toEqual([`${fileName}: ${path} is empty`]);
  });
});

describe('reading a secret file', () => {
  const read = (content: string) => resolveSecretFiles({ ADMIN_TOKEN_FILE: secretFile(content) }, ['ADMIN_TOKEN']).env.ADMIN_TOKEN;

  it('removes one trailing newline, LF or CRLF, and only one', () => {
    expect(read('abc')).toBe('abc');
    expect(read('abc\n')).toBe('abc');
    expect(read('abc\r\n')).toBe('abc');
    expect(read('abc\n\n')).toBe('abc\n');
    expect(read('abc\r\n\r\n')).toBe('abc\r\n');
    expect(read('a\nb\n')).toBe('a\nb');
  });

  it('hands on the file setting removed, the secret in its place, and other settings untouched', () => {
    const r = resolveSecretFiles({ ADMIN_TOKEN_FILE: secretFile('x'.repeat(20)), PORT: '8080', ADMIN_CREDENTIALS_FILE: '/etc/creds.json' }, SECRET_SETTINGS);
    expect(r).toEqual({ env: { ADMIN_TOKEN: 'x'.repeat(20), PORT: '8080', ADMIN_CREDENTIALS_FILE: '/etc/creds.json' }, problems: [], failed: [] });
  });

  it('takes an empty NAME_FILE for unset, as an empty variable is, and NAME beside it for the value', () => {
    expect(loadConfigFrom({ ...real, ADMIN_TOKEN_FILE: '' }).adminToken).toBe(real.ADMIN_TOKEN);
    expect(loadConfigFrom({ ...without('ADMIN_TOKEN'), ADMIN_TOKEN: ' ', ADMIN_TOKEN_FILE: secretFile('a-token-of-sixteen-plus') }).adminToken).toBe(
      'a-token-of-sixteen-plus',
    );
  });

  it('calls a file holding only a newline or blanks empty', () => {
    for (const content of ['\n', '\r\n', '   \n']) {
      const path = secretFile(content);
      expect(problems({ ADMIN_TOKEN_FILE: path })).toEqual([`ADMIN_TOKEN_FILE: ${path} is empty`]);
    }
  });

  it('stops at a folder, naming the setting and the path', () => {
    const folder = join(dir, 'a-folder');
    mkdirSync(folder);
    expect(problems({ SERVICE_API_KEY_FILE: folder })).toEqual([`SERVICE_API_KEY_FILE: cannot read ${folder}: is a directory`]);
  });

  // A file it may not read: the reader's EACCES, injected below (root, as CI runs, reads any file).
  it("says why a read failed from the error's code alone, never its message", () => {
    const denied = () => {
      throw Object.assign(new Error('EACCES reading leaked-secret-content'), { code: 'EACCES' });
    };
    const odd = () => {
      throw new Error('leaked-secret-content');
    };
    const r = resolveSecretFiles({ ADMIN_TOKEN_FILE: '/run/secrets/admin-token', SERVICE_API_KEY_FILE: '/run/secrets/key' }, SECRET_SETTINGS, (path) =>
      path.endsWith('key') ? odd() : denied(),
    );
    expect(r.problems).toEqual([
      'SERVICE_API_KEY_FILE: cannot read /run/secrets/key: unreadable',
      'ADMIN_TOKEN_FILE: cannot read /run/secrets/admin-token: permission denied',
    ]);
    expect(r.failed).toEqual(['SERVICE_API_KEY', 'ADMIN_TOKEN']);
    expect(JSON.stringify(r)).not.toContain('leaked-secret-content');
  });
});

describe('a secret read from a file is checked as the variable is', () => {
  it('refuses an ADMIN_TOKEN shorter than 16 characters with the same message, without repeating it', () => {
    const fromEnv = problems({ ADMIN_TOKEN: 'short-secret' });
    const fromFile = problems({ ADMIN_TOKEN_FILE: secretFile('short-secret\n') });
    expect(fromFile).toEqual(['ADMIN_TOKEN: must be at least 16 characters']);
    expect(fromFile).toEqual(fromEnv);
    expect(fromFile.join('\n')).not.toContain('short-secret');
  });

  it('refuses a DATABASE_URL of another engine with the same message, without its password', () => {
    const url = 'mysql://bridge:hunter2-secret@db/emr';
    const fromFile = problems({ DATABASE_URL_FILE: secretFile(url) });
    expect(fromFile).toEqual(problems({ DATABASE_URL: url }));
    expect(fromFile.join('\n')).toContain('DATABASE_URL: only PostgreSQL is supported');
    expect(fromFile.join('\n')).not.toContain('hunter2-secret');
  });

  it('collects the files’ problems and every other setting’s into one ConfigError, one line each', () => {
    const missing = join(dir, 'missing-key');
    const p = problems({
      SERVICE_BASE_URL: 'https://service.example.test',
      FHIR_BASE_URL: 'https://emr.example.test/fhir',
      SERVICE_API_KEY_FILE: missing,
      ADMIN_TOKEN: 'a-long-enough-admin-token',
      ADMIN_TOKEN_FILE: secretFile('another-long-admin-token'),
      SERVICE_SIGNING_SECRETS_FILE: secretFile('whsec_1'),
      PUSHER_LEASE_MS: '15000',
    });
    expect(p).toEqual([
      `SERVICE_API_KEY_FILE: cannot read ${missing}: no such file`,
      'ADMIN_TOKEN, ADMIN_TOKEN_FILE: both are set; set one of the two (ADMIN_TOKEN_FILE holds the path of a file with the value)',
      'SERVICE_KEY_ID: required when SERVICE_BASE_URL is set',
      expect.stringMatching(/^PUSHER_LEASE_MS: must be at least twice SERVICE_TIMEOUT_MS/),
    ]);
  });
});

describe('file settings among the unknown-setting check', () => {
  it('still names a misspelt _FILE setting, with the closest known one', () => {
    expect(problems({ ADMIN_TOKN_FILE: secretFile('x') })).toEqual(['ADMIN_TOKN_FILE: not a setting of emr-bridge; did you mean ADMIN_TOKEN_FILE?']);
    expect(problems({ SERVICE_API_KEYS_FILE: '/run/secrets/key' })).toEqual([
      'SERVICE_API_KEYS_FILE: not a setting of emr-bridge; did you mean SERVICE_API_KEY_FILE?',
    ]);
  });

  it('says that a setting which is no secret has no _FILE variant', () => {
    expect(problems({ FHIR_BASE_URL_FILE: '/run/secrets/url' })).toEqual([
      'FHIR_BASE_URL_FILE: not a setting of emr-bridge; only secrets are read from a file (DATABASE_URL_FILE, SERVICE_API_KEY_FILE, SERVICE_SIGNING_SECRETS_FILE, FHIR_BEARER_TOKEN_FILE, ADMIN_TOKEN_FILE, OTEL_EXPORTER_OTLP_HEADERS_FILE, OTEL_EXPORTER_OTLP_TRACES_HEADERS_FILE), so set FHIR_BASE_URL itself',
    ]);
  });

  it('leaves ADMIN_CREDENTIALS_FILE a path setting, read by the access module and not as a secret', () => {
    expect(loadConfigFrom({ ADMIN_CREDENTIALS_FILE: '/etc/emr-bridge/credentials.json' }).adminCredentialsFile).toBe('/etc/emr-bridge/credentials.json');
  });

  it('has parseConfig, which reads no file, refuse a _FILE setting left unread rather than ignore it', () => {
    expect(() => parseConfig({ ADMIN_TOKEN_FILE: '/run/secrets/admin-token' })).toThrow(
      'ADMIN_TOKEN_FILE: files are read by loadConfig/loadConfigFrom, not parseConfig; pass the value itself',
    );
  });
});

describe('settings from .env, the environment and the command line', () => {
  const names = SECRET_SETTINGS;

  it('lets a later source replace a secret in either form, as any setting', () => {
    expect(overlaySettings([{ ADMIN_TOKEN: 'from-dotenv', PORT: '1' }, { ADMIN_TOKEN_FILE: '/run/secrets/t' }], names)).toEqual({
      ADMIN_TOKEN_FILE: '/run/secrets/t',
      PORT: '1',
    });
    expect(overlaySettings([{ ADMIN_TOKEN_FILE: '/run/secrets/t' }, { ADMIN_TOKEN: 'from-env' }, { PORT: '2', HOST: undefined }], names)).toEqual({
      ADMIN_TOKEN: 'from-env',
      PORT: '2',
    });
  });

  it('keeps both forms given by one source, for the conflict to be named', () => {
    expect(overlaySettings([{}, { DATABASE_URL: 'postgres://a/b', DATABASE_URL_FILE: '/run/secrets/db' }], names)).toEqual({
      DATABASE_URL: 'postgres://a/b',
      DATABASE_URL_FILE: '/run/secrets/db',
    });
  });
});

describe('the commands read secret files too', () => {
  // As at a terminal: the commands read the environment (and a .env file) through loadConfig.
  function environment(settings: Record<string, string>) {
    for (const name of ['SERVICE_BASE_URL', 'FHIR_BASE_URL', 'DATABASE_PATH', 'DATABASE_URL', ...SECRET_SETTINGS.map((n) => `${n}_FILE`)]) vi.stubEnv(name, '');
    vi.stubEnv('DATA_DIR', join(dir, 'data'));
    for (const [name, value] of Object.entries(settings)) vi.stubEnv(name, value);
  }

  it('backup takes DATABASE_URL_FILE for DATABASE_URL (and refuses PostgreSQL, as it does the variable)', async () => {
    environment({ DATABASE_URL_FILE: secretFile('postgres://bridge:file-password@db.internal:5432/emr\n') });
    const r = await captureOutput(() => main(['backup']));
    expect(r.code).toBe(1);
    expect(r.err).toContain(POSTGRES_REFUSAL);
    expect(r.err).not.toContain('file-password');
  });

  it.each(['backup', 'migrate'])('%s stops at an unreadable DATABASE_URL_FILE, naming it and the path', async (command) => {
    const path = join(dir, 'no-database-url');
    environment({ DATABASE_URL_FILE: path });
    const r = await captureOutput(() => main([command]));
    expect(r.code).toBe(2);
    expect(r.err).toContain(`DATABASE_URL_FILE: cannot read ${path}: no such file`);
  });
});
