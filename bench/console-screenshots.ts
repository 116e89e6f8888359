// `npm run screenshots`: draws docs/console/*.png, the console's main pages as an operator sees them, from a
// real adapter (the bundled simulator; an in-process EMR that can be taken down) after some traffic: a few
// appointments, dead letters made while the EMR was down, a document that failed and one retried, a viewer's
// refused replay, a body shown, and two appointments waiting for doctors and a location the EMR keeps to itself.
// Debian's Chromium draws them (bench/support/chromium.ts).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { sha256Hex } from '../src/access/credentials.ts';
import { writeCredentialsFile } from '../src/access/credentials-file.ts';
import { sleep } from '../src/clock.ts';
import { parseConfig } from '../src/config.ts';
import { createMemoryEmr } from '../src/emr/memory/index.ts';
import { requestJson } from '../src/http/json-request.ts';
import { silentLogger } from '../src/logger.ts';
import { startAdapter } from '../src/runtime/adapter.ts';
import { launchChromium } from './support/chromium.ts';

const OUT = fileURLToPath(new URL('../docs/console/', import.meta.url));
const VIEWER = 'screenshots-viewer-token-0001';
const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');

async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  for (const deadline = performance.now() + timeoutMs; !(await probe()); await sleep(100))
    if (performance.now() > deadline) throw new Error(`screenshots: ${what} did not happen within ${timeoutMs} ms`);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-screenshots-'));
  const credentials = join(dir, 'admin-credentials.json');
  writeCredentialsFile(credentials, [{ name: 'day-viewer', role: 'viewer', sha256: sha256Hex(VIEWER) }]);
  const config = parseConfig({
    PORT: '0',
    DATA_DIR: dir,
    ADMIN_CREDENTIALS_FILE: credentials,
    PUSHER_SCAN_CRON: '0 0 1 1 *',
    PROCESSOR_POLL_MS: '50',
    PROCESSOR_MAX_ATTEMPTS: '2',
    PROCESSOR_BACKOFF_BASE_MS: '100',
    PROCESSOR_BACKOFF_MAX_MS: '200',
    PUSHER_MAX_ATTEMPTS: '1',
  });
  const emr = createMemoryEmr();
  const adapter = await startAdapter({ config, logger: silentLogger(), emr });
  const browser = await launchChromium();
  try {
    const admin = <T>(method: 'GET' | 'POST', path: string, body?: unknown) =>
      requestJson<T>(method, `${adapter.adminUrl}/admin${path}`, body, { authorization: `Bearer ${adapter.adminToken}` });
    const sim = <T>(method: 'GET' | 'POST', path: string, body?: unknown) => requestJson<T>(method, `${adapter.serviceUrl}${path}`, body);
    const deliveries = async () => (await sim<{ eventId: string; eventType: string }[]>('GET', '/_sim/deliveries')).body;
    const stateOf = async (id: string) => (await admin<{ state: string }>('GET', `/events/${id}`)).body.state;
    const allFinal = async () =>
      (await Promise.all((await deliveries()).map((d) => stateOf(d.eventId)))).every((s) => s === 'applied' || s === 'dead' || s === 'discarded_stale');

    for (let i = 0; i < 8; i++) await sim('POST', '/_sim/appointments', { clinicId: adapter.clinicId });
    await until('the appointments applied', allFinal);
    emr.down = true;
    await sim('POST', '/_sim/appointments', { clinicId: adapter.clinicId });
    await until('dead letters', async () => (await admin<{ events: unknown[] }>('GET', '/dead-letters')).body.events.length > 0 && (await allFinal()));
    emr.down = false;

    const doc = (n: number) => ({
      documentType: 'lab_report',
      externalId: `lab-2026-${String(n).padStart(4, '0')}`,
      patientPhone: `+1555030${String(n).padStart(4, '0')}`,
      patientName: 'Synthetic Patient',
      label: 'Full blood count',
      file: { base64: PDF.toString('base64'), filename: 'report.pdf' },
    });
    const statusOf = async (n: number) => (await admin<{ document?: { status: string } }>('GET', `/documents/${doc(n).externalId}`)).body.document?.status;
    for (const n of [1, 2]) await admin('POST', '/documents', doc(n));
    await until(
      'the first documents answered',
      async () => !['queued', undefined].includes(await statusOf(1)) && !['queued', undefined].includes(await statusOf(2)),
    );
    await sim('POST', '/_sim/faults', { integration: { status: 503, count: 1000 } });
    for (const n of [3, 4]) await admin('POST', '/documents', doc(n));
    await until('a failed document', async () => (await statusOf(3)) === 'FAILED' && (await statusOf(4)) === 'FAILED');
    await sim('POST', '/_sim/faults', {});
    // The bundled clinic's quiet hours hold lab reports: half a day later (before anyone signs in) they are sent.
    await sim('POST', '/_sim/clock/advance', { seconds: 12 * 3600 });
    await until('the held documents sent', async () => (await statusOf(1)) === 'SENT', 30_000);

    // From now on the EMR keeps its doctors and locations to itself: two appointments wait for a person to map theirs.
    emr.creatable.delete('doctor');
    emr.creatable.delete('location');
    for (const name of ['Dr Amara Okafor', 'Dr Amara Okafor-Reyes', 'Dr Lucas Moreau']) emr.addMasterRecord({ entityType: 'doctor', name });
    emr.addMasterRecord({ entityType: 'location', name: 'Clinic Room 4' });
    const booked = await sim<{ location: { serviceId: string } }>('POST', '/_sim/appointments', {
      clinicId: adapter.clinicId,
      doctor: { name: 'Dr Amara Okafor' },
      location: { name: 'Clinic Room 4' },
    });
    await sim('POST', '/_sim/appointments', {
      clinicId: adapter.clinicId,
      doctor: { name: 'Dr Lucas Moreau' },
      location: { serviceId: booked.body.location.serviceId },
    });
    await until(
      'appointments waiting for a mapping',
      async () => (await admin<{ events: unknown[] }>('GET', '/events?state=waiting')).body.events.length === 2,
    );

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
    const page = await context.newPage();
    const signIn = async (p: Page, token: string) => {
      await p.goto(`${adapter.adminUrl}/console/sign-in`);
      await p.locator('#token').fill(token);
      await p.keyboard.press('Enter');
      await p.waitForURL(`${adapter.adminUrl}/console`);
    };
    const viewer = await context.browser()!.newContext({ viewport: { width: 1280, height: 800 } });
    const viewerPage = await viewer.newPage();
    await signIn(viewerPage, VIEWER);
    const deadId = (await admin<{ events: { eventId: string }[] }>('GET', '/dead-letters')).body.events[0]!.eventId;
    await viewerPage.goto(`${adapter.adminUrl}/console/dead-letters/confirm?eventId=${deadId}`);
    await viewer.close();

    await signIn(page, adapter.adminToken);
    await page.goto(`${adapter.adminUrl}/console/documents/${doc(4).externalId}/confirm-retry`);
    await page.getByRole('button', { name: 'Retry the document' }).click();
    await until('the retried document answered', async () => !['FAILED', 'queued'].includes((await statusOf(4)) ?? 'queued'));
    const applied = (await deliveries()).find((d) => d.eventType === 'appointment.created')!.eventId;
    await page.goto(`${adapter.adminUrl}/console/events/${applied}`);
    await page.getByRole('button', { name: 'Show body' }).click();

    mkdirSync(OUT, { recursive: true });
    const shoot = async (path: string, name: string, ready?: string) => {
      await page.goto(`${adapter.adminUrl}/console${path}`);
      if (ready) await page.locator(ready).first().waitFor();
      await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });
      console.log(`docs/console/${name}.png`);
    };
    await shoot('', 'overview', '#chart canvas');
    await shoot('/events', 'events');
    await shoot(`/events/${applied}`, 'event');
    await shoot('/dead-letters', 'dead-letters');
    await shoot('/needs-mapping', 'needs-mapping');
    await shoot('/documents', 'documents');
    await shoot('/audit', 'audit');
  } finally {
    await browser.close();
    await adapter.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
