// `npx emr-bridge fhir-server` as a stand-in for a vendor's EMR without what the adapter prefers:
// --no-transactions and --no-conditional-create take them out of its CapabilityStatement and its behaviour.
import { afterEach, describe, expect, it } from 'vitest';
import { type Child, startChild } from '../../bench/support/child.ts';
import { requestJson } from '../../src/http/json-request.ts';

let child: Child | undefined;
afterEach(async () => {
  await child?.stop();
  child = undefined;
});

interface Statement {
  rest: { interaction?: { code: string }[]; resource: { type: string; conditionalCreate?: boolean }[] }[];
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
});
