// The bundled FHIR R4 server: conditional create by identifier answers the same resource twice,
// identifier search finds it, and with a data file the data survives a restart.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startFhirServer, type RunningFhirServer } from '../../src/fhir-server/server.ts';
import { silentLogger } from '../../src/logger.ts';

const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-fhir-'));
const servers: RunningFhirServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

async function start(dataFile?: string, port = 0) {
  const s = await startFhirServer({ port, logger: silentLogger(), ...(dataFile ? { dataFile } : {}) });
  servers.push(s);
  return s;
}

const patient = { resourceType: 'Patient', identifier: [{ system: 'urn:test', value: 'pat_1' }], name: [{ text: 'Test Patient' }] };

async function conditionalCreate(base: string) {
  const res = await fetch(`${base}/Patient`, {
    method: 'POST',
    headers: { 'content-type': 'application/fhir+json', 'if-none-exist': 'identifier=urn:test|pat_1' },
    body: JSON.stringify(patient),
  });
  return { status: res.status, body: (await res.json()) as { id: string; meta: { versionId: string; lastUpdated: string } } };
}

describe('bundled FHIR server', () => {
  it('answers the same resource to a repeated conditional create, and finds it by identifier', async () => {
    const s = await start();
    const first = await conditionalCreate(s.baseUrl);
    const second = await conditionalCreate(s.baseUrl);
    expect(first.status).toBe(201);
    expect(second.status).toBe(200);
    expect(second.body.id).toBe(first.body.id);
    const search = (await (await fetch(`${s.baseUrl}/Patient?identifier=urn:test|pat_1`)).json()) as { entry: { resource: { id: string } }[] };
    expect(search.entry.map((e) => e.resource.id)).toEqual([first.body.id]);
  });

  it('answers 404 for an unknown id and 400 for a body that is not JSON', async () => {
    const s = await start();
    expect((await fetch(`${s.baseUrl}/Patient/nope`)).status).toBe(404);
    const bad = await fetch(`${s.baseUrl}/Patient`, { method: 'POST', headers: { 'content-type': 'application/fhir+json' }, body: '{nope' });
    expect(bad.status).toBe(400);
  });

  it('keeps its data across a restart when given a data file', async () => {
    const file = join(dir, 'fhir.jsonl');
    const s1 = await start(file);
    const created = await conditionalCreate(s1.baseUrl);
    await s1.close();
    const s2 = await start(file, s1.port);
    const read = await fetch(`${s2.baseUrl}/Patient/${created.body.id}`);
    expect(read.status).toBe(200);
    const restored = (await read.json()) as { id: string; meta: { versionId: string; lastUpdated: string } };
    expect(restored.id).toBe(created.body.id);
    // The same version, not a new one: a restart must not make every record look changed (the EMR scan's watermark).
    expect(restored.meta).toMatchObject({ versionId: created.body.meta.versionId, lastUpdated: created.body.meta.lastUpdated });
    expect((await conditionalCreate(s2.baseUrl)).body.id).toBe(created.body.id);
  });
});
