// `emr-bridge crosswalk import FILE | export` against a running adapter whose EMR keeps its doctors and locations:
// an import maps the good lines and lists each refused one with its reason (exit 1 then), the export prints every
// mapping as the import reads it, and each change is audited with the CLI's door; a bad command line exits 2.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryEmr, type MemoryEmr } from '../../src/emr/memory/index.ts';
import { silentLogger } from '../../src/logger.ts';
import { startAdapter, type RunningAdapter } from '../../src/runtime/adapter.ts';
import { runCli } from '../support/cli.ts';
import { quietAdapterConfig } from '../support/quiet-adapter.ts';

const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-cli-crosswalk-'));
let adapter: RunningAdapter;
let emr: MemoryEmr;
beforeAll(async () => {
  emr = createMemoryEmr();
  emr.creatable.delete('doctor');
  emr.creatable.delete('location');
  adapter = await startAdapter({ config: quietAdapterConfig(dir, 'cli-crosswalk-token-0001'), logger: silentLogger(), emr });
});
afterAll(async () => {
  await adapter.close();
  rmSync(dir, { recursive: true, force: true });
});

const cli = (args: string[]) => runCli([...args, '--admin-url', adapter.url, '--admin-token', adapter.adminToken], { DATA_DIR: dir });

describe('emr-bridge crosswalk', () => {
  it('imports the good lines of a file, lists the refused one with its reason, and exports what it mapped', async () => {
    const doctor = emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Test Doctor' });
    const location = emr.addMasterRecord({ entityType: 'location', name: 'Test Clinic Room 1' });
    const file = join(dir, 'crosswalk.csv');
    writeFileSync(file, `entityType,serviceId,emrId\ndoctor,doc_1,${doctor}\nlocation,loc_1,${location}\nlocation,loc_2,location-nobody\n`);

    const imported = await cli(['crosswalk', 'import', file]);

    expect(imported.code, imported.out).toBe(1);
    expect(JSON.parse(imported.out)).toEqual({ imported: 2, refused: [{ line: 4, reason: expect.stringContaining('location-nobody') }] });
    const exported = await cli(['crosswalk', 'export']);
    expect(exported).toEqual({ code: 0, out: `entityType,serviceId,emrId\ndoctor,doc_1,${doctor}\nlocation,loc_1,${location}\n` });
    const audit = await fetch(`${adapter.url}/admin/audit?action=crosswalk.map`, { headers: { authorization: `Bearer ${adapter.adminToken}` } });
    const entries = ((await audit.json()) as { entries: { door: string; outcome: string }[] }).entries;
    expect(entries.map((e) => [e.door, e.outcome]).sort()).toEqual([
      ['cli', 'ok'],
      ['cli', 'ok'],
      ['cli', 'refused'],
    ]);
  });

  it('exits 0 when every line is imported', async () => {
    const doctor = emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Second' });
    const file = join(dir, 'one.csv');
    writeFileSync(file, `entityType,serviceId,emrId\ndoctor,doc_2,${doctor}\n`);

    const imported = await cli(['crosswalk', 'import', file]);

    expect(imported.code, imported.out).toBe(0);
    expect(JSON.parse(imported.out)).toEqual({ imported: 1, refused: [] });
  });

  it('says how to use it (exit 2) without a file to import, and exit 1 with the error for a file without the header', async () => {
    const bare = await cli(['crosswalk', 'import']);
    expect(bare.code).toBe(2);
    expect(bare.out).toContain('usage: crosswalk import <file> | crosswalk export');
    const file = join(dir, 'headless.csv');
    writeFileSync(file, 'doctor,doc_1,practitioner-1\n');
    const headless = await cli(['crosswalk', 'import', file]);
    expect(headless.code).toBe(1);
    expect(headless.out).toMatch(/^error 400: invalid_csv: the first line must be the header/);
  });
});
