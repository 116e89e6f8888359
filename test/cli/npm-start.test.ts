// `npm start`'s path on a fresh data folder: `emr-bridge serve` with no settings starts the adapter, the
// bundled simulator and the bundled FHIR server wired together; an appointment created in the simulator
// arrives in FHIR; SIGTERM shuts everything down cleanly (exit 0).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startChild, type Child } from '../support/child.ts';
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

    const found = await waitFor(async () => {
      const res = await fetch(`${banner.fhir}/Appointment?identifier=${encodeURIComponent(`urn:emr-bridge:service|${serviceId}`)}`);
      const bundle = (await res.json()) as { entry?: { resource: { id: string; participant: unknown[] } }[] };
      return bundle.entry?.length ? bundle.entry : undefined;
    }, 20_000);
    expect(found).toHaveLength(1);
    expect(found[0]!.resource.participant.length).toBeGreaterThanOrEqual(3);

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
    const kept = await fetch(`${again.fhir}/Appointment?identifier=${encodeURIComponent(`urn:emr-bridge:service|${serviceId}`)}`);
    expect(((await kept.json()) as { entry?: unknown[] }).entry).toHaveLength(1);
    expect(await child.stop('SIGTERM')).toBe(0);
  }, 60_000);
});
