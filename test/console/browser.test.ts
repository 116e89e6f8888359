// Owns the console in a real browser (Debian's Chromium through playwright-core) against the real adapter,
// simulator and FHIR server: sign in with the keyboard, the overview chart with real numbers, finding an
// event by id, a viewer denied a replay, an operator replaying a dead letter until it is applied and
// retrying a failed document until it is SENT, a forged POST refused, and the audit page showing all of it.
// No CSP violation or script error on any page; readable at tablet width. One browser for the file.
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN } from '../support/stack.ts';
import { waitFor } from '../support/wait.ts';
import { type BrowserStack, fireAndApply, makeDeadLetters, makeFailedDocument, signIn, startBrowserStack, VIEWER } from './support/browser-stack.ts';

let b: BrowserStack;
let operator: { context: BrowserContext; page: Page; errors: string[] };
let deadLetters: string[];

beforeAll(async () => {
  b = await startBrowserStack();
}, 60_000);

afterAll(async () => {
  await b?.close();
});

/** Reloads `page` until `locator` says `text` (a worker finishing in the background). */
async function reloadUntil(page: Page, selector: string, text: string) {
  await waitFor(
    async () => {
      await page.reload();
      return (await page.locator(selector).textContent())?.includes(text);
    },
    20_000,
    300,
  );
}

describe('the console in a browser', () => {
  it('an operator signs in with the keyboard; the skip link is the first stop', async () => {
    operator = await signIn(b, ADMIN);
    const { page } = operator;
    await expect(page.locator('h1').textContent()).resolves.toBe('Overview');
    await page.keyboard.press('Tab');
    await expect(page.evaluate('document.activeElement.textContent')).resolves.toBe('Skip to content');
    // The public listener never serves the console.
    expect((await fetch(`${b.s.adapter.url}/console/sign-in`)).status).toBe(404);
  }, 30_000);

  it('the overview chart shows real numbers once the simulator fired events', async () => {
    await fireAndApply(b, 3);
    const { page } = operator;
    await page.goto(b.console);
    await page.locator('#chart canvas').first().waitFor();
    const summary = await page.locator('#chart-summary').textContent();
    const [, received, applied] = /(\d+) events received and (\d+) applied/.exec(summary ?? '') ?? [];
    expect(Number(received)).toBeGreaterThanOrEqual(3);
    expect(Number(applied)).toBeGreaterThanOrEqual(3);
    await expect(page.locator('#chart').getAttribute('data-received')).resolves.toBe(received);
    await expect(page.locator('#received-24h').textContent()).resolves.toBe(received);
  }, 40_000);

  it('finds an event by its id and shows what it did in the EMR; the body only on request', async () => {
    const { page } = operator;
    const eventId = (await b.s.simGet<{ eventId: string; eventType: string }[]>('/_sim/deliveries')).body.find(
      (d) => d.eventType === 'appointment.created',
    )!.eventId;
    await page.goto(`${b.console}/events`);
    await page.getByLabel('Event id').fill(eventId);
    await page.getByRole('button', { name: 'Search' }).click();
    await expect(page.locator('#events-table tbody tr').count()).resolves.toBe(1);
    await page.getByRole('link', { name: eventId }).click();
    await expect(page.locator('#event-state').textContent()).resolves.toBe('applied');
    await expect(page.locator('#emr-refs').textContent()).resolves.toContain('Appointment/');
    await expect(page.locator('#event-body').count()).resolves.toBe(0);
    await page.getByRole('button', { name: 'Show body' }).click();
    await expect(page.locator('#event-body').textContent()).resolves.toContain(eventId);
  }, 30_000);

  it('a viewer is denied a replay', async () => {
    deadLetters = await makeDeadLetters(b);
    const viewer = await signIn(b, VIEWER);
    await viewer.page.goto(`${b.console}/dead-letters`);
    await viewer.page.locator(`a[href$="confirm?eventId=${deadLetters[0]}"]`).click();
    await expect(viewer.page.locator('h1').textContent()).resolves.toBe('Not allowed');
    expect(viewer.errors).toEqual([]);
    await viewer.context.close();
  }, 40_000);

  it('an operator replays the dead letters (all selected with the keyboard, confirmed) and sees them applied', async () => {
    const { page } = operator;
    const n = deadLetters.length;
    await page.goto(`${b.console}/dead-letters`);
    await page.getByLabel('Select all on this page').focus();
    await page.keyboard.press('Space');
    await page.getByRole('button', { name: 'Replay selected…' }).click();
    await page.getByRole('button', { name: n === 1 ? 'Replay 1 event' : `Replay ${n} events` }).click();
    await expect(page.locator('.flash').textContent()).resolves.toContain(`Replayed ${n} of ${n}.`);
    for (const id of deadLetters) {
      await page.goto(`${b.console}/events/${id}`);
      await reloadUntil(page, '#event-state', 'applied');
    }
  }, 40_000);

  it('an operator retries a failed document and sees it SENT', async () => {
    const externalId = await makeFailedDocument(b);
    const { page } = operator;
    await page.goto(`${b.console}/documents?status=FAILED`);
    await page.getByRole('link', { name: externalId }).click();
    await page.getByRole('link', { name: 'Retry…' }).click();
    await page.getByRole('button', { name: 'Retry the document' }).click();
    await expect(page.locator('.flash').textContent()).resolves.toContain('queued to be sent again');
    await reloadUntil(page, '#document-status', 'SENT');
  }, 40_000);

  it('a forged POST without the CSRF token is refused', async () => {
    const { page } = operator;
    const status = await page.evaluate(
      async (id) =>
        (
          await fetch('/console/dead-letters/replay', {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: `eventId=${id}`,
          })
        ).status,
      deadLetters[0],
    );
    expect(status).toBe(403);
  }, 20_000);

  it('the audit page shows each of those actions', async () => {
    const { page } = operator;
    await page.goto(`${b.console}/audit`);
    const rows = await page.evaluate<string[][]>(
      `Array.from(document.querySelectorAll('#audit tbody tr'), (tr) => Array.from(tr.cells, (c) => c.textContent.trim()))`,
    );
    const seen = rows.map(([, actor, door, action, targets, , outcome]) => `${actor} ${door} ${action} ${targets} ${outcome}`);
    const revealed = rows.find((r) => r[3] === 'event.body.reveal')?.[4];
    expect(seen).toEqual(
      expect.arrayContaining([
        'admin console sign_in  ok',
        'day-viewer console sign_in  ok',
        `admin console event.body.reveal ${revealed} ok`,
        `day-viewer console dead_letter.replay ${deadLetters[0]} denied`,
        `admin console dead_letter.replay ${deadLetters[0]} refused`,
        expect.stringMatching(/^admin console document\.retry doc-console-\d+ ok$/),
      ]),
    );
    const replayed = rows.find((r) => r[3] === 'dead_letter.replay' && r[6] === 'ok')!;
    expect([replayed[1], replayed[2], replayed[4]!.split(', ').sort()]).toEqual(['admin', 'console', [...deadLetters].sort()]);
  }, 20_000);

  it('no page broke its CSP or a script, and a tablet-wide window scrolls no page sideways', async () => {
    expect(operator.errors).toEqual([]);
    const { page } = operator;
    await page.setViewportSize({ width: 768, height: 1024 });
    for (const path of ['', '/events', '/dead-letters', '/documents', '/mappings', '/audit']) {
      await page.goto(`${b.console}${path}`);
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      expect(overflow, path || '/').toBeLessThanOrEqual(0);
    }
    await operator.context.close();
  }, 30_000);
});
