// The console's "Needs mapping" page in a real browser (Debian's Chromium through playwright-core) against a real
// adapter whose EMR keeps its doctors and locations to itself (the in-memory EMR with master records): signed
// webhooks for three appointments wait for their doctor and location; the overview counts them beside the dead
// letters and leads to the page; the page lists both records with their waiting events and the EMR's suggestions;
// an operator maps the doctor by choosing a suggestion, is refused (on the page) an EMR id the EMR does not have,
// maps the location by its typed id; the appointments are applied and the overview's count falls to 0. A viewer
// reads the page without a form. No CSP violation or script error; readable at tablet width.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../bench/support/chromium.ts';
import { sha256Hex } from '../../src/access/credentials.ts';
import { writeCredentialsFile } from '../../src/access/credentials-file.ts';
import { createMemoryEmr, type MemoryEmr } from '../../src/emr/memory/index.ts';
import { silentLogger } from '../../src/logger.ts';
import { startAdapter, type RunningAdapter } from '../../src/runtime/adapter.ts';
import { quietAdapterConfig } from '../support/quiet-adapter.ts';
import { waitFor } from '../support/wait.ts';
import { signIn as signInThroughForm, text, untilNoneWaiting } from './support/browser-stack.ts';
import { appointmentEventBody, signedWebhook } from '../support/webhooks.ts';

const ADMIN = 'needs-mapping-admin-token-0001';
const VIEWER = 'needs-mapping-viewer-token-0001';
const DOCTOR = { serviceId: 'doc_okafor', externalId: null, name: 'Dr Amara Okafor' };
const LOCATION = { serviceId: 'loc_room_4', externalId: null, name: 'Clinic Room 4' };

let dir: string;
let emr: MemoryEmr;
let adapter: RunningAdapter;
let browser: Browser;
let operator: { context: BrowserContext; page: Page; errors: string[] };
const ids = { doctor: '', namesake: '', location: '' };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'emr-bridge-needs-mapping-'));
  const credentials = join(dir, 'admin-credentials.json');
  writeCredentialsFile(credentials, [{ name: 'day-viewer', role: 'viewer', sha256: sha256Hex(VIEWER) }]);
  emr = createMemoryEmr();
  emr.creatable.delete('doctor');
  emr.creatable.delete('location');
  ids.doctor = emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Amara Okafor' });
  ids.namesake = emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Amara Okafor-Reyes' });
  ids.location = emr.addMasterRecord({ entityType: 'location', name: 'Clinic Room 4' });
  const config = quietAdapterConfig(dir, ADMIN, { ADMIN_CREDENTIALS_FILE: credentials, PROCESSOR_POLL_MS: '50' });
  [adapter, browser] = await Promise.all([startAdapter({ config, logger: silentLogger(), emr }), launchChromium()]);
  operator = await signIn(ADMIN);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await adapter?.close();
  rmSync(dir, { recursive: true, force: true });
});

const consoleUrl = (path = '') => `${adapter.url}/console${path}`;

/** Signed in through the form; the page's own refusals (422) are provoked on purpose. */
const signIn = (token: string) => signInThroughForm({ browser, console: consoleUrl() }, token, undefined, /status of 4\d\d/);

async function sendAppointment(serviceId: string, doctor = DOCTOR): Promise<void> {
  const body = appointmentEventBody({
    appointment: { ...(appointmentEventBody().appointment as object), serviceId },
    patient: { serviceId: `pat_${serviceId}`, externalId: null, name: 'Synthetic Patient', phone: '+15550000042' },
    doctor,
    location: LOCATION,
  });
  const w = signedWebhook(Date.now(), { body, keyId: adapter.keyId, secrets: adapter.signingSecrets });
  expect((await fetch(adapter.webhookUrl, { method: 'POST', headers: w.headers, body: w.body })).status).toBe(200);
}

const waitingEvents = async () => {
  const res = await fetch(`${adapter.url}/admin/events?state=waiting`, { headers: { authorization: `Bearer ${ADMIN}` } });
  return ((await res.json()) as { events: unknown[] }).events.length;
};

describe('the Needs mapping page in a browser', () => {
  it('the overview counts the appointments waiting for their doctor and location, and leads to the page listing both', async () => {
    for (const id of ['apt_nm_1', 'apt_nm_2', 'apt_nm_3']) await sendAppointment(id);
    await waitFor(async () => (await waitingEvents()) === 3 || undefined, 20_000);
    expect(emr.appointments()).toEqual([]);

    const { page } = operator;
    await page.goto(consoleUrl());
    await expect(text(page, '#waiting-count')).resolves.toBe('3');
    await page.locator('#waiting-count').click();
    await page.waitForURL(consoleUrl('/needs-mapping'));
    await expect(page.locator('h1').textContent()).resolves.toBe('Needs mapping');
    const rows = await page.evaluate<string[][]>(
      `Array.from(document.querySelectorAll('#unmapped tbody tr'), (tr) => Array.from(tr.cells, (c) => c.innerText.trim()).slice(0, 3))`,
    );
    expect(rows).toEqual([
      ['doctor', 'doc_okafor\nDr Amara Okafor', '3'],
      ['location', 'loc_room_4\nClinic Room 4', '3'],
    ]);
    await expect(page.locator('#rec-0 time').count()).resolves.toBe(1);
  }, 40_000);

  it("shows the EMR's suggestions as choices, and a viewer the same without a form", async () => {
    const { page } = operator;
    const doctorChoices = page.locator('#rec-0 input[type="radio"]');
    await expect(doctorChoices.count()).resolves.toBe(2);
    await expect(page.getByLabel(`Dr Amara Okafor ${ids.doctor}`).count()).resolves.toBe(1);
    await expect(page.getByLabel(`Dr Amara Okafor-Reyes ${ids.namesake}`).count()).resolves.toBe(1);
    await expect(page.getByLabel(`Clinic Room 4 ${ids.location}`).count()).resolves.toBe(1);

    const viewer = await signIn(VIEWER);
    await viewer.page.goto(consoleUrl('/needs-mapping'));
    await expect(viewer.page.locator('#rec-0 li').allTextContents()).resolves.toEqual([
      `Dr Amara Okafor ${ids.doctor}`,
      `Dr Amara Okafor-Reyes ${ids.namesake}`,
    ]);
    await expect(viewer.page.locator('form.map-form, form.import-form').count()).resolves.toBe(0);
    expect(viewer.errors).toEqual([]);
    await viewer.context.close();
  }, 30_000);

  it('an operator maps the doctor by choosing a suggestion; a wrong EMR id for the location is refused on the page; its right id maps it', async () => {
    const { page } = operator;
    await page.getByLabel(`Dr Amara Okafor ${ids.doctor}`).check();
    await page.getByRole('button', { name: 'Map doctor doc_okafor' }).click();
    await expect(text(page, '.flash')).resolves.toBe(`Mapped doctor doc_okafor to EMR id ${ids.doctor}; the 3 events waiting for it are taken up.`);
    await expect(page.locator('#unmapped tbody tr').count()).resolves.toBe(1);

    await page.getByLabel('Or its EMR id').fill('location-emr-999');
    await page.getByRole('button', { name: 'Map location loc_room_4' }).click();
    await expect(text(page, '#refusal')).resolves.toMatch(/^Not mapped: location loc_room_4: the EMR has no .*location-emr-999/);
    await expect(page.getByLabel('Or its EMR id').inputValue()).resolves.toBe('location-emr-999');

    await page.getByLabel('Or its EMR id').fill(ids.location);
    await page.getByRole('button', { name: 'Map location loc_room_4' }).click();
    await expect(text(page, '.flash')).resolves.toMatch(new RegExp(`^Mapped location loc_room_4 to EMR id ${ids.location}`));
    await expect(text(page, '#no-unmapped')).resolves.toBe('Nothing needs mapping.');
  }, 30_000);

  it('the appointments are applied and the waiting count on the overview falls to 0', async () => {
    await waitFor(() => emr.appointments().length === 3 || undefined, 10_000);
    const { page } = operator;
    await untilNoneWaiting(page, consoleUrl());
    await expect(page.locator('#waiting-age').count()).resolves.toBe(0);
    const audit = await fetch(`${adapter.url}/admin/audit?action=crosswalk.map`, { headers: { authorization: `Bearer ${ADMIN}` } });
    const entries = ((await audit.json()) as { entries: { actor: string; door: string; targets: string[]; outcome: string }[] }).entries;
    expect(entries.map((e) => `${e.actor} ${e.door} ${e.targets.join(',')} ${e.outcome}`).reverse()).toEqual([
      'admin console doctor:doc_okafor ok',
      'admin console location:loc_room_4 refused',
      'admin console location:loc_room_4 ok',
    ]);
  }, 30_000);

  it('no page broke its CSP or a script, and at tablet width the page with a record and its form scrolls nothing sideways', async () => {
    const { page } = operator;
    await sendAppointment('apt_nm_4', { ...DOCTOR, serviceId: 'doc_okafor_locum' });
    await waitFor(async () => (await waitingEvents()) === 1 || undefined, 20_000);
    expect(operator.errors).toEqual([]);
    await page.setViewportSize({ width: 768, height: 1024 });
    await page.goto(consoleUrl('/needs-mapping'));
    await expect(page.getByRole('button', { name: 'Map doctor doc_okafor_locum' }).count()).resolves.toBe(1);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(0);
    await operator.context.close();
  }, 20_000);
});
