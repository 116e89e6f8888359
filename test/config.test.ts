// Settings: defaults for a zero-configuration start, and a bad or missing setting named in the error.
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
    expect(c.bundled).toEqual({ service: true, fhir: true });
    expect(c.port).toBe(3000);
    expect(c.webhook.toleranceSeconds).toBe(300);
    expect(c.fhir.identifierSystem).toBe('urn:emr-bridge:service');
    expect(c.databasePath).toMatch(/data\/emr-bridge\.db$/);
  });

  it('reads a production configuration, trimming the trailing slash and splitting secrets', () => {
    const c = parseConfig(production);
    expect(c.bundled).toEqual({ service: false, fhir: false });
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
