// One data folder, both demos in turn (`npm start`, then `FHIR_SERVER_PROFILE=vendor npm start`, and back): each
// demo finds its own clinic on the bundled simulator again (the vendor one by its roster, though bundled.json
// last held the default one's), and bundled.json says which profile the FHIR server runs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { silentLogger } from '../../src/logger.ts';
import { startAdapter } from '../../src/runtime/adapter.ts';
import { readBundledState } from '../../src/runtime/bundled-state.ts';
import { json } from '../support/stack.ts';

const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-demo-profiles-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Starts the zero-configuration adapter on the shared folder, books one appointment, and stops. */
async function demo(settings: Record<string, string> = {}): Promise<{ clinicId: string; doctor: string; profile: string | undefined }> {
  const config = parseConfig({ PORT: '0', DATA_DIR: dir, PUSHER_SCAN_CRON: '0 0 1 1 *', ...settings });
  const adapter = await startAdapter({ config, logger: silentLogger() });
  try {
    const booked = await json<{ doctor: { serviceId: string } }>('POST', `${adapter.serviceUrl}/_sim/appointments`, { clinicId: adapter.clinicId });
    return { clinicId: adapter.clinicId!, doctor: booked.body.doctor.serviceId, profile: readBundledState(dir).emrProfile };
  } finally {
    await adapter.close();
  }
}

describe('the default and the vendor demo on one data folder', () => {
  it('each finds its own clinic again after the other ran', async () => {
    const first = await demo();
    const vendor = await demo({ FHIR_SERVER_PROFILE: 'vendor' });
    const back = await demo();
    const vendorAgain = await demo({ FHIR_SERVER_PROFILE: 'vendor' });

    expect(first).toMatchObject({ doctor: expect.stringMatching(/^doc_[0-9a-f]{12}$/), profile: undefined });
    expect(vendor).toMatchObject({ doctor: 'doc_okafor', profile: 'vendor' });
    expect(vendor.clinicId).not.toBe(first.clinicId);
    expect(back).toMatchObject({ doctor: expect.stringMatching(/^doc_[0-9a-f]{12}$/), profile: undefined });
    expect(vendorAgain).toMatchObject({ clinicId: vendor.clinicId, doctor: 'doc_hartley', profile: 'vendor' });
  }, 90_000);
});
