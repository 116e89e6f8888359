// The console counts what happened, in a real browser against the real adapter, simulator and FHIR server
// (issue 25): a mapping the simulator refuses (its `mappings.refuse` fault) shows on the overview and on the
// dead-letters page with the service's reason; an operator replays one once the fault is lifted (the service
// then takes it) and dismisses another with a reason; and after a burst of signed webhooks with the processor
// held back (nothing taken in from the inbox), the overview's "received" equals what the receiver acknowledged,
// with the whole burst in the inbox backlog beside it.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN } from '../support/stack.ts';
import { waitFor } from '../support/wait.ts';
import { appointmentEventBody, signedWebhook } from '../support/webhooks.ts';
import { type BrowserStack, signIn, startBrowserStack, text } from './support/browser-stack.ts';

let b: BrowserStack;
let operator: { context: BrowserContext; page: Page; errors: string[] };

beforeAll(async () => {
  b = await startBrowserStack();
  operator = await signIn(b, ADMIN);
}, 60_000);

afterAll(async () => {
  await operator?.context.close();
  await b?.close();
});

interface DeadMapping {
  entityType: string;
  serviceId: string;
  lastError?: string;
}

const deadMappings = async () => (await b.admin<{ mappings: DeadMapping[] }>('GET', '/dead-letters?limit=500')).body.mappings;

/** Webhooks the receiver acknowledged as new (stored), from its own metric, every event type. */
async function acknowledged(): Promise<number> {
  const metrics = await (await fetch(`${b.s.adapter.adminUrl}/metrics`)).text();
  let n = 0;
  for (const m of metrics.matchAll(/^emr_bridge_webhook_events_received_total\{[^}]*duplicate="false"[^}]*\} (\d+)$/gm)) n += Number(m[1]);
  return n;
}

/** Keeps the processor from taking anything in from the inbox (its intake fails, and is tried again each pass) until released. */
function holdProcessorBack(): () => void {
  const db = new Database(join(b.s.dir, 'emr-bridge.db'));
  db.pragma('busy_timeout = 5000');
  db.exec("CREATE TRIGGER test_hold_intake BEFORE INSERT ON processing BEGIN SELECT RAISE(ABORT, 'held back by the test'); END");
  return () => {
    db.exec('DROP TRIGGER test_hold_intake');
    db.close();
  };
}

describe('the console counts what happened', () => {
  let appointmentId: string;

  it('a mapping the service refuses shows on the overview and on the dead-letters page with its reason', async () => {
    await b.s.simPost('/_sim/faults', { mappings: { refuse: 404 } });
    appointmentId = (await b.s.simPost<{ serviceId: string }>('/_sim/appointments', { clinicId: b.s.clinicId })).body.serviceId;
    // The appointment, its patient, doctor and location: each mapping refused, none posted.
    const refused = await waitFor(async () => {
      const m = await deadMappings();
      return m.length === 4 ? m : undefined;
    }, 20_000);
    expect(refused.find((m) => m.entityType === 'appointment')).toMatchObject({ serviceId: appointmentId, lastError: expect.stringMatching(/^not_found/) });

    const { page } = operator;
    await page.goto(b.console);
    await expect(text(page, '#dead-mapping-count')).resolves.toBe('4');
    await page.locator('#dead-mapping-count').click();
    await page.waitForURL(/\/console\/dead-letters/);
    const row = page.locator('#dead-mappings tbody tr', { hasText: appointmentId });
    await expect(row.locator('.reason').textContent()).resolves.toMatch(/^not_found: no appointment /);
    await expect(page.locator('#dead-mappings tbody tr').count()).resolves.toBe(4);
  }, 40_000);

  it('an operator replays one once the service takes mappings again, and it is posted; dismisses another with a reason', async () => {
    await b.s.simPost('/_sim/faults', {});
    const { page } = operator;
    await page.goto(`${b.console}/dead-letters`);
    await page.getByRole('link', { name: `Replay the appointment mapping ${appointmentId}` }).click();
    await page.getByRole('button', { name: 'Replay the mapping' }).click();
    await expect(text(page, '.flash')).resolves.toBe(`The appointment mapping ${appointmentId} is queued to be posted again.`);
    // The service knows the appointment's EMR id now.
    const externalId = await waitFor(
      async () =>
        (await b.s.simGet<{ appointment: { externalId: string | null } }>(`/_sim/appointments/${appointmentId}`)).body.appointment.externalId ?? undefined,
      20_000,
    );
    expect(externalId).toMatch(/\S/);
    const patient = (await deadMappings()).find((m) => m.entityType === 'patient')!;
    await page.goto(`${b.console}/dead-letters`);
    await page.getByRole('link', { name: `Dismiss the patient mapping ${patient.serviceId}` }).click();
    await page.getByLabel('Reason').fill('mapped by hand at the service');
    await page.getByRole('button', { name: 'Dismiss the mapping' }).click();
    await expect(text(page, '.flash')).resolves.toBe(`The patient mapping ${patient.serviceId} is dismissed.`);
    await expect(page.locator('#dead-mappings tbody tr').count()).resolves.toBe(2);
    await page.goto(b.console);
    await expect(text(page, '#dead-mapping-count')).resolves.toBe('2');

    await page.goto(`${b.console}/audit`);
    const rows = await page.evaluate<string[][]>(
      `Array.from(document.querySelectorAll('#audit tbody tr'), (tr) => Array.from(tr.cells, (c) => c.textContent.trim()))`,
    );
    const seen = rows.map(([, actor, door, action, targets, , outcome]) => `${actor} ${door} ${action} ${targets} ${outcome}`);
    expect(seen).toEqual(
      expect.arrayContaining([`admin console mapping.replay appointment:${appointmentId} ok`, `admin console mapping.dismiss patient:${patient.serviceId} ok`]),
    );
    expect(JSON.stringify(rows)).not.toContain('by hand');

    // Readable at tablet width with the refused mappings listed: no page scrolls sideways.
    await page.setViewportSize({ width: 768, height: 1024 });
    for (const path of ['', '/dead-letters']) {
      await page.goto(`${b.console}${path}`);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth'), path || '/').toBeLessThanOrEqual(0);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  }, 40_000);

  it('after a burst with the processor held back, "received" is what the receiver acknowledged, and the burst waits in the backlog', async () => {
    const { page } = operator;
    const release = holdProcessorBack();
    try {
      const before = await acknowledged();
      const burst = 300;
      const { sub } = b.s;
      const send = async (i: number) => {
        const body = appointmentEventBody({
          clinicId: b.s.clinicId,
          appointment: { ...(appointmentEventBody().appointment as object), serviceId: `apt_burst_${i}` },
        });
        const w = signedWebhook(Date.now(), { body, keyId: sub.keyId, secrets: [sub.signingSecret] });
        return (await fetch(b.s.adapter.webhookUrl, { method: 'POST', headers: w.headers, body: w.body })).status;
      };
      const statuses: number[] = [];
      // At most 50 in flight: a burst the receiver group-commits, without exhausting the test's sockets.
      for (let i = 0; i < burst; i += 50) statuses.push(...(await Promise.all(Array.from({ length: Math.min(50, burst - i) }, (_, j) => send(i + j)))));
      const acked = statuses.filter((s) => s >= 200 && s < 300).length;
      expect(acked).toBe(burst);
      expect(await acknowledged()).toBe(before + acked);

      await page.goto(b.console);
      await expect(text(page, '#received-24h')).resolves.toBe(String(await acknowledged()));
      // Nothing of the burst was taken in: all of it is in the backlog, the oldest waiting since the burst began.
      expect(Number(await text(page, '#inbox-depth'))).toBeGreaterThanOrEqual(burst);
      await expect(text(page, '#inbox-age')).resolves.toMatch(/^\d+(\.\d)? (ms|s|min)$/);
      // The chart says the same (its JSON reads the same counts).
      await page.locator('#chart canvas').first().waitFor();
      await expect(page.locator('#chart').getAttribute('data-received')).resolves.toBe(String(before + acked));
      expect(operator.errors).toEqual([]);
    } finally {
      release();
    }
  }, 60_000);
});
