// `npx emr-bridge fhir-server` as a stand-in for a vendor's EMR without what the adapter prefers:
// --no-transactions and --no-conditional-create take them out of its CapabilityStatement and its behaviour;
// --profile vendor makes it an EMR that owns its records, and any other profile is a usage error.
import { afterEach, describe, expect, it } from 'vitest';
import { type Child, startChild } from '../../bench/support/child.ts';
import { main } from '../../src/cli/main.ts';
import { requestJson } from '../../src/http/json-request.ts';
import { captureOutput } from '../support/captured-output.ts';

let child: Child | undefined;
afterEach(async () => {
  await child?.stop();
  child = undefined;
});

interface Statement {
  rest: { interaction?: { code: string }[]; resource: { type: string; conditionalCreate?: boolean; interaction: { code: string }[] }[] }[];
}

describe('emr-bridge fhir-server', () => {
  it('declares and serves transactions and conditional create by default', async () => {
    child = await startChild(['bin/emr-bridge.js', 'fhir-server', '--port', '0'], { env: { LOG_LEVEL: 'silent' } });
    const statement = (await requestJson<Statement>('GET', `${child.url}/metadata`)).body;
    expect(statement.rest[0]!.interaction?.map((i) => i.code)).toContain('transaction');
    expect(statement.rest[0]!.resource.find((r) => r.type === 'Patient')?.conditionalCreate).toBe(true);
  });

  it('with --no-transactions --no-conditional-create declares neither and refuses a transaction Bundle', async () => {
    child = await startChild(['bin/emr-bridge.js', 'fhir-server', '--port', '0', '--no-transactions', '--no-conditional-create'], {
      env: { LOG_LEVEL: 'silent' },
    });
    const statement = (await requestJson<Statement>('GET', `${child.url}/metadata`)).body;
    expect(statement.rest[0]!.interaction?.map((i) => i.code) ?? []).not.toContain('transaction');
    expect(statement.rest[0]!.resource.find((r) => r.type === 'Patient')?.conditionalCreate).toBe(false);
    const posted = await requestJson(
      'POST',
      child.url,
      { resourceType: 'Bundle', type: 'transaction', entry: [] },
      { 'content-type': 'application/fhir+json' },
    );
    expect(posted.status).toBe(405);
  });

  it('with --profile vendor serves the master data read only and counts the POST Practitioner it refuses', async () => {
    child = await startChild(['bin/emr-bridge.js', 'fhir-server', '--port', '0', '--profile', 'vendor'], { env: { LOG_LEVEL: 'silent' } });
    const statement = (await requestJson<Statement>('GET', `${child.url}/metadata`)).body;
    expect(statement.rest[0]!.interaction).toBeUndefined();
    expect(statement.rest[0]!.resource.find((r) => r.type === 'Practitioner')?.interaction.map((i) => i.code)).toEqual(['read', 'search-type']);
    expect((await requestJson('GET', `${child.url}/Practitioner/pr-1001`)).status).toBe(200);
    const posted = await requestJson('POST', `${child.url}/Practitioner`, { resourceType: 'Practitioner' }, { 'content-type': 'application/fhir+json' });
    expect(posted.status).toBe(405);
    expect((await requestJson('GET', `${child.url}/_control/counters`)).body).toMatchObject({ postPractitioner: 1, refused: { 'POST Practitioner': 1 } });
  });

  it('--profile vendor --help prints the usage with --profile, exit 0', async () => {
    const res = await captureOutput(() => main(['fhir-server', '--profile', 'vendor', '--help']));
    expect(res.code).toBe(0);
    expect(res.out).toContain('--profile default|vendor');
  });

  it('refuses an unknown --profile with a usage error naming it, exit 2', async () => {
    const res = await captureOutput(() => main(['fhir-server', '--port', '0', '--profile', 'epic']));
    expect(res.code).toBe(2);
    expect(res.err).toContain('--profile must be default or vendor, got epic');
    expect(res.err).toContain('usage: emr-bridge fhir-server');
  });
});
