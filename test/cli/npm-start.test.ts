// `npm start`'s path on a fresh data folder: `emr-bridge serve` with no settings starts the adapter, the
// bundled simulator and the bundled FHIR server wired together; an appointment created in the simulator
// arrives in FHIR; SIGTERM shuts everything down cleanly (exit 0).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startChild, type Child } from '../../bench/support/child.ts';
import { runCli } from '../support/cli.ts';
import { adapterFhirReader } from '../support/fhir-client.ts';
import { waitFor } from '../support/wait.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'emr-bridge-start-'));
let child: Child | undefined;
afterAll(async () => {
  await child?.stop('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

// Only what a fresh machine has: no settings but a data folder and a free port.
const env = { PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'warn', SERVICE_BASE_URL: '', FHIR_BASE_URL: '', ADMIN_TOKEN: '' };

describe('emr-bridge serve with zero configuration', () => {
  it('wires simulator → adapter → FHIR and stops cleanly on SIGTERM', async () => {
    child = await startChild(['bin/emr-bridge.js', 'serve'], { env, timeoutMs: 30_000 });
    expect(child.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const banner = await waitFor(() => {
      const out = child!.output();
      const service = /^\s+service\s+(http\S+)/m.exec(out)?.[1];
      const fhir = /^\s+FHIR R4 EMR\s+(http\S+)/m.exec(out)?.[1];
      const clinicId = /"clinicId":"([^"]+)"/.exec(out)?.[1];
      return service && fhir && clinicId ? { service, fhir, clinicId } : undefined;
    });

    const ready = await fetch(`${child.url}/readyz`);
    expect(ready.status).toBe(200);

    const created = await fetch(`${banner.service}/_sim/appointments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ clinicId: banner.clinicId }),
    });
    expect(created.status).toBeLessThan(300);
    const appointment = (await created.json()) as { serviceId?: string; appointment?: { serviceId: string } };
    const serviceId = appointment.serviceId ?? appointment.appointment!.serviceId;

    // The bundled FHIR server answers nobody who has not signed in; the adapter's key is in the data folder.
    expect((await fetch(`${banner.fhir}/Appointment`)).status).toBe(401);
    const fhir = adapterFhirReader(dataDir, banner.fhir);
    const byServiceId = `Appointment?identifier=${encodeURIComponent(`urn:emr-bridge:service|${serviceId}`)}`;
    const found = await waitFor(async () => {
      const bundle = (await fhir.call<{ entry?: { resource: { id: string; participant: unknown[] } }[] }>('GET', byServiceId)).body;
      return bundle.entry?.length ? bundle.entry : undefined;
    }, 20_000);
    await fhir.close();
    expect(found).toHaveLength(1);
    expect(found[0]!.resource.participant.length).toBeGreaterThanOrEqual(3);
    // What the banner tells a person to run reads the same record, signed in the same way.
    const read = await runCli(['fhir-get', byServiceId], { DATA_DIR: dataDir, SERVICE_BASE_URL: '', FHIR_BASE_URL: '', LOG_LEVEL: 'silent' });
    expect(read.code).toBe(0);
    expect(read.out).toContain(found[0]!.resource.id);

    expect(await child.stop('SIGTERM')).toBe(0);

    // A restart on the same data folder keeps the clinic, the simulator's state and the EMR's records.
    child = await startChild(['bin/emr-bridge.js', 'serve'], { env, timeoutMs: 30_000 });
    const again = await waitFor(() => {
      const out = child!.output();
      const fhir = /^\s+FHIR R4 EMR\s+(http\S+)/m.exec(out)?.[1];
      const clinicId = /"clinicId":"([^"]+)"/.exec(out)?.[1];
      return fhir && clinicId ? { fhir, clinicId } : undefined;
    });
    expect(again.clinicId).toBe(banner.clinicId);
    const fhirAgain = adapterFhirReader(dataDir, again.fhir);
    const kept = await fhirAgain.call<{ entry?: unknown[] }>('GET', byServiceId);
    await fhirAgain.close();
    expect(kept.body.entry).toHaveLength(1);
    expect(await child.stop('SIGTERM')).toBe(0);
  }, 60_000);
});
