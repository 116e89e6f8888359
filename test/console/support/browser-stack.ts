// The whole system for the console's browser tests: the real simulator, FHIR server and adapter
// (test/support/stack.ts) with the admin surface (and so the console) on ADMIN_PORT, a viewer credential
// beside ADMIN_TOKEN, low attempt limits so a dead letter and a failed document are quick to make, and
// Debian's Chromium (one browser per test file). Helpers make the states the tests act on.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../../../bench/support/chromium.ts';
import { sha256Hex } from '../../../src/access/credentials.ts';
import { writeCredentialsFile } from '../../../src/access/credentials-file.ts';
import { PDF } from '../../support/simulator-fixture.ts';
import { ADMIN, freePort, json, startStack, type Stack } from '../../support/stack.ts';
import { waitFor } from '../../support/wait.ts';

export const VIEWER = 'console-viewer-token-e2e-0001';
const NO_QUIET_HOURS = { timeZone: 'UTC', quietHours: { start: '00:00', end: '00:00' } };

export interface BrowserStack {
  s: Stack;
  browser: Browser;
  /** The console's base URL (the admin listener). */
  console: string;
  admin<T = Record<string, unknown>>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: T }>;
  close(): Promise<void>;
}

export async function startBrowserStack(): Promise<BrowserStack> {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-console-'));
  const credentials = join(dir, 'admin-credentials.json');
  writeCredentialsFile(credentials, [{ name: 'day-viewer', role: 'viewer', sha256: sha256Hex(VIEWER) }]);
  const [s, browser] = await Promise.all([
    startStack({
      clinic: NO_QUIET_HOURS,
      settings: { ADMIN_PORT: String(await freePort()), ADMIN_CREDENTIALS_FILE: credentials, PROCESSOR_MAX_ATTEMPTS: '2', PUSHER_MAX_ATTEMPTS: '1' },
    }),
    launchChromium(),
  ]);
  const base = s.adapter.adminUrl;
  return {
    s,
    browser,
    console: `${base}/console`,
    admin: (method, path, body) => json(method, `${base}/admin${path}`, body, { authorization: `Bearer ${ADMIN}` }),
    async close() {
      await browser.close();
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A browser context signed in with `token` through the sign-in form, using the keyboard; its page on the overview.
 * `expectedRefusals`: the answers a test provokes on purpose (by default 403 and 404), left out of `errors`.
 */
export async function signIn(
  b: Pick<BrowserStack, 'browser' | 'console'>,
  token: string,
  viewport = { width: 1280, height: 900 },
  expectedRefusals = /status of 40[34]/,
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await b.browser.newContext({ viewport });
  const page = await context.newPage();
  const errors: string[] = [];
  // A CSP violation or a script error shows here: the tests expect none.
  page.on('console', (m) => {
    if (m.type() === 'error' && !expectedRefusals.test(m.text())) errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(b.console);
  await page.waitForURL(/\/console\/sign-in/);
  await page.locator('#token').fill(token);
  await page.keyboard.press('Enter');
  await page.waitForURL(`${b.console}`);
  return { context, page, errors };
}

/** Appointments the simulator creates (each fires its events), all applied. */
export async function fireAndApply(b: BrowserStack, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await b.s.simPost('/_sim/appointments', { clinicId: b.s.clinicId });
  await waitFor(async () => {
    const deliveries = (await b.s.simGet<{ eventId: string }[]>('/_sim/deliveries')).body;
    const states = await Promise.all(deliveries.map(async (d) => (await b.admin<{ state: string }>('GET', `/events/${d.eventId}`)).body.state));
    return deliveries.length > 0 && states.every((st) => st === 'applied' || st === 'discarded_stale');
  }, 20_000);
}

/** Events that became dead letters: an appointment's, made while the EMR was down (two attempts), the EMR back afterwards. */
export async function makeDeadLetters(b: BrowserStack): Promise<string[]> {
  await b.s.stopFhir();
  const deliveries = async () => (await b.s.simGet<{ eventId: string }[]>('/_sim/deliveries')).body.map((d) => d.eventId);
  const before = new Set(await deliveries());
  await b.s.simPost('/_sim/appointments', { clinicId: b.s.clinicId });
  const dead = await waitFor(async () => {
    const made = (await deliveries()).filter((id) => !before.has(id));
    const states = await Promise.all(made.map(async (id) => (await b.admin<{ state: string }>('GET', `/events/${id}`)).body.state));
    return made.length > 0 && states.every((st) => st === 'dead') ? made : undefined;
  }, 20_000);
  await b.s.startFhir();
  return dead;
}

/** A lab report that failed here: the service answered 503 to its one allowed attempt. */
export async function makeFailedDocument(b: BrowserStack): Promise<string> {
  await b.s.simPost('/_sim/faults', { integration: { status: 503, count: 1 } });
  const externalId = `doc-console-${Date.now()}`;
  await b.admin('POST', '/documents', {
    documentType: 'lab_report',
    externalId,
    patientPhone: '+15550401234',
    patientName: 'Synthetic Patient',
    label: 'Full blood count',
    file: { base64: PDF.toString('base64'), filename: 'document.pdf' },
  });
  await waitFor(async () => (await b.admin<{ document: { status: string } }>('GET', `/documents/${externalId}`)).body.document?.status === 'FAILED', 15_000);
  await b.s.simPost('/_sim/faults', {});
  return externalId;
}

/** An element's text, trimmed (undefined when it has none). */
export const text = async (page: Page, selector: string) => (await page.locator(selector).textContent())?.trim();

/** Reloads the console's overview (`overviewUrl`) until its "Waiting for a mapping" count is 0. */
export async function untilNoneWaiting(page: Page, overviewUrl: string): Promise<void> {
  await waitFor(
    async () => {
      await page.goto(overviewUrl);
      return (await text(page, '#waiting-count')) === '0' || undefined;
    },
    10_000,
    200,
  );
}
