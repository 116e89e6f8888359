// The vendor demo in a real browser (Debian's Chromium through playwright-core): `FHIR_SERVER_PROFILE=vendor npm
// start` in this process (the bundled simulator with its clinic's roster, the bundled FHIR server's vendor profile
// with SMART sign-in, the adapter booking into Slots). Three try-it appointments wait for their doctors and rooms;
// the console's Needs mapping lists the roster's doctors and rooms with the EMR's record of the same name as the one
// suggestion for each; importing samples/crosswalk.csv on the page maps all seven; the waiting appointments are
// booked into their doctors' Slots and the overview's waiting count falls to 0. No CSP violation or script error.
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../bench/support/chromium.ts';
import { SAMPLES_DIR } from '../../src/paths.ts';
import { adapterFhirReader } from '../support/fhir-client.ts';
import { json } from '../support/stack.ts';
import { waitFor } from '../support/wait.ts';
import { signIn, text, untilNoneWaiting } from './support/browser-stack.ts';
import { startZeroConfigAdapter } from '../support/zero-config-adapter.ts';

type Booked = { serviceId: string; appointment: { startsAt: string }; doctor: { serviceId: string } };
type FhirAppointment = { status: string; start: string; slot: { reference: string }[] };

/** The roster as samples/crosswalk.csv maps it, and the names the EMR's master data gives those records. */
const DOCTORS = [
  ['doc_fischer', 'Dr Lena Fischer', 'pr-1003'],
  ['doc_hartley', 'Dr Benjamin Hartley', 'pr-1002'],
  ['doc_okafor', 'Dr Amara Okafor', 'pr-1001'],
];
const ROOMS = [
  ['loc_room1', 'Room 1', 'loc-2001'],
  ['loc_room2', 'Room 2', 'loc-2002'],
  ['loc_room3', 'Room 3', 'loc-2003'],
];

let running: Awaited<ReturnType<typeof startZeroConfigAdapter>>;
let browser: Browser;
let operator: { context: BrowserContext; page: Page; errors: string[] };
let booked: Booked[];

beforeAll(async () => {
  [running, browser] = await Promise.all([startZeroConfigAdapter({ FHIR_SERVER_PROFILE: 'vendor', PROCESSOR_POLL_MS: '50' }), launchChromium()]);
  operator = await signIn({ browser, console: consoleUrl() }, running.adapter.adminToken, undefined, /status of 4\d\d/);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await running?.close();
});

const consoleUrl = (path = '') => `${running.adapter.url}/console${path}`;
const waitingEvents = async () =>
  (
    await json<{ events: unknown[] }>('GET', `${running.adapter.url}/admin/events?state=waiting`, undefined, {
      authorization: `Bearer ${running.adapter.adminToken}`,
    })
  ).body.events.length;

describe('the vendor demo in a browser', () => {
  it('the console lists the try-it appointments’ doctors and rooms as waiting, each with its EMR record as the suggestion', async () => {
    const { adapter } = running;
    booked = [];
    for (let i = 0; i < 3; i++) booked.push((await json<Booked>('POST', `${adapter.serviceUrl}/_sim/appointments`, { clinicId: adapter.clinicId })).body);
    await waitFor(async () => (await waitingEvents()) === 3 || undefined, 20_000);

    const { page } = operator;
    await page.goto(consoleUrl());
    await expect(text(page, '#waiting-count')).resolves.toBe('3');
    await page.locator('#waiting-count').click();
    await page.waitForURL(consoleUrl('/needs-mapping'));
    const rows = await page.evaluate<string[][]>(
      `Array.from(document.querySelectorAll('#unmapped tbody tr'), (tr) => Array.from(tr.cells, (c) => c.innerText.trim()).slice(0, 3))`,
    );
    expect(rows).toEqual([
      ...DOCTORS.map(([id, name]) => ['doctor', `${id}\n${name}`, '1']),
      ...ROOMS.map(([id, name]) => ['location', `${id}\n${name}`, '1']),
    ]);
    for (const [i, [, name, emrId]] of [...DOCTORS, ...ROOMS].entries()) {
      await expect(page.locator(`#rec-${i} input[type="radio"]`).count()).resolves.toBe(1);
      await expect(page.locator(`#rec-${i}`).getByLabel(`${name} ${emrId}`).count()).resolves.toBe(1);
    }
  }, 60_000);

  it('imports samples/crosswalk.csv on the page, mapping all seven records in one import', async () => {
    const { page } = operator;
    await page.locator('#csv-file').setInputFiles(join(SAMPLES_DIR, 'crosswalk.csv'));
    await page.locator('#import').click();
    await expect(text(page, '#imported-count')).resolves.toBe('7');
    await expect(text(page, '#refused-count')).resolves.toBe('0');
  }, 30_000);

  it('books the waiting appointments into their doctors’ Slots, and the waiting count falls to 0', async () => {
    const fhir = adapterFhirReader(running.dir, running.adapter.emrAddress!);
    const schedules: Record<string, string> = { doc_okafor: 'sch-3001', doc_hartley: 'sch-3002', doc_fischer: 'sch-3003' };
    for (const b of booked) {
      const identifier = encodeURIComponent(`urn:emr-bridge:service|${b.serviceId}`);
      const found = await waitFor(async () => {
        const bundle = (await fhir.call<{ entry?: { resource: FhirAppointment }[] }>('GET', `Appointment?identifier=${identifier}`)).body;
        return bundle.entry?.[0]?.resource;
      }, 10_000);
      const slot = `Slot/${schedules[b.doctor.serviceId]}-${b.appointment.startsAt.replace(/[-:]/g, '').slice(0, 13)}Z`;
      expect(found).toMatchObject({ status: 'booked', start: b.appointment.startsAt, slot: [{ reference: slot }] });
    }
    await fhir.close();

    const { page } = operator;
    await untilNoneWaiting(page, consoleUrl());
    await page.goto(consoleUrl('/needs-mapping'));
    await expect(text(page, '#no-unmapped')).resolves.toBe('Nothing needs mapping.');
    expect(operator.errors).toEqual([]);
  }, 40_000);
});
