// The console's quarantine page (src/console/pages/quarantine.ts) over a real quarantine (an in-memory SQLite
// store): what it holds and how full it is; apply and dismiss each through a confirmation page, then a POST with
// the CSRF token, audited with the eventId (never the reason); apply refused while the event is over the limit, and
// a second time; a viewer reads but is refused the actions; the overview links to it with its count.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import { createQuarantine } from '../../src/receiver/quarantine.ts';
import { openDatabase } from '../../src/sqlite/open.ts';
import { createSqliteQuarantineStore } from '../../src/storage/sqlite/quarantine.ts';
import { consoleApp, csrfOf, signedIn, VIEWER_TOKEN } from './support/console-app.ts';
import { T0 } from './support/fakes.ts';

const LIMIT = 256 * 1024;

/** A console whose quarantine holds one event that fits the limit now and one that does not. */
function withQuarantine() {
  const db = openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS });
  const c0 = consoleApp();
  const store = createSqliteQuarantineStore(db, c0.clock);
  const quarantine = createQuarantine({ store, maxBodyBytes: LIMIT, capacityBytes: 256 * 1024 * 1024, logger: silentLogger() });
  const c = consoleApp({ clock: c0.clock, quarantine });
  const fits = `evt_fits_${randomUUID()}`;
  const big = `evt_big_${randomUUID()}`;
  const admit = (eventId: string, size: number) =>
    store.admit({ eventId, eventType: 'appointment.created', headers: {}, body: Buffer.alloc(size, 0x20), receivedAt: T0 }, 256 * 1024 * 1024);
  return { c, db, store, fits, big, ready: Promise.all([admit(fits, 200 * 1024), admit(big, 2 * 1024 * 1024)]) };
}

describe('the quarantine page', () => {
  it('lists what waits, how full it is and the limit now; apply is offered only for what fits', async () => {
    const q = withQuarantine();
    await q.ready;
    const agent = await signedIn(q.c, VIEWER_TOKEN);
    const page = await agent.get('/console/quarantine').expect(200);
    expect(page.text).toContain('aria-current="page">Quarantine');
    expect(page.text).toContain(q.fits);
    expect(page.text).toContain(q.big);
    expect(page.text).toMatch(/id="quarantine-events">2</);
    expect(page.text).toContain('256 KiB');
    expect(page.text).toContain(`/console/quarantine/confirm-apply?eventId=${q.fits}`);
    expect(page.text).not.toContain(`/console/quarantine/confirm-apply?eventId=${q.big}`);
    expect(page.text).toContain(`/console/quarantine/confirm-dismiss?eventId=${q.big}`);
    expect((await agent.get('/console/quarantine?state=applied').expect(200)).text).toContain('Nothing applied here.');
    await agent.get('/console/quarantine?state=lost').expect(400);
  });

  it('applies one after a confirmation page, once, audited with its eventId', async () => {
    const q = withQuarantine();
    await q.ready;
    const agent = await signedIn(q.c);
    const confirm = await agent.get(`/console/quarantine/confirm-apply?eventId=${q.fits}`).expect(200);
    expect(confirm.text).toContain('Apply 1 event');
    expect((await q.store.get(q.fits))?.state).toBe('quarantined');
    const res = await agent
      .post('/console/quarantine/apply')
      .type('form')
      .send({ eventId: q.fits, csrf: csrfOf(confirm.text) })
      .expect(303);
    expect(res.headers.location).toBe('/console/quarantine');
    expect((await agent.get('/console/quarantine').expect(200)).text).toContain(`Applied ${q.fits}: it is in the inbox.`);
    expect(await q.store.get(q.fits)).toMatchObject({ state: 'applied', applied: { by: 'admin' } });
    expect(q.db.prepare('SELECT event_id FROM inbox_events').pluck().all()).toEqual([q.fits]);
    expect(q.c.auditor.entries.at(-1)).toMatchObject({ actor: 'admin', door: 'console', action: 'quarantine.apply', targets: [q.fits], outcome: 'ok' });

    // Again (a second tab): refused, nothing stored twice.
    await agent
      .post('/console/quarantine/apply')
      .type('form')
      .send({ eventId: q.fits, csrf: csrfOf(confirm.text) })
      .expect(303);
    expect((await agent.get('/console/quarantine').expect(200)).text).toContain('Not done: the event was applied already.');
    expect(q.db.prepare('SELECT count(*) FROM inbox_events').pluck().get()).toBe(1);
    expect(q.c.auditor.entries.at(-1)).toMatchObject({ action: 'quarantine.apply', outcome: 'refused' });
    // Its confirmation page now says so.
    const again = await agent.get(`/console/quarantine/confirm-apply?eventId=${q.fits}`).expect(303);
    expect(again.headers.location).toBe('/console/quarantine');
  });

  it('refuses to apply one over the limit, saying to raise WEBHOOK_MAX_BODY_BYTES', async () => {
    const q = withQuarantine();
    await q.ready;
    const agent = await signedIn(q.c);
    const page = await agent.get(`/console/quarantine/confirm-apply?eventId=${q.big}`).expect(422);
    expect(page.text).toContain('Raise the limit first');
    expect(page.text).toContain(`at least ${2 * 1024 * 1024}`);
    const csrf = csrfOf((await agent.get('/console/quarantine').expect(200)).text);
    await agent.post('/console/quarantine/apply').type('form').send({ eventId: q.big, csrf }).expect(303);
    expect((await agent.get('/console/quarantine').expect(200)).text).toContain('raise WEBHOOK_MAX_BODY_BYTES to at least');
    expect((await q.store.get(q.big))?.state).toBe('quarantined');
    await agent.get('/console/quarantine/confirm-apply?eventId=no-such-event').expect(404);
  });

  it('dismisses one with a reason after a confirmation page; the reason stays out of the audit trail', async () => {
    const q = withQuarantine();
    await q.ready;
    const agent = await signedIn(q.c);
    const confirm = await agent.get(`/console/quarantine/confirm-dismiss?eventId=${q.big}`).expect(200);
    expect(confirm.text).toContain('name="reason"');
    const csrf = csrfOf(confirm.text);
    await agent.post('/console/quarantine/dismiss').type('form').send({ eventId: q.big, csrf }).expect(400);
    await agent.post('/console/quarantine/dismiss').type('form').send({ eventId: q.big, reason: 'sent again smaller', csrf }).expect(303);
    expect(await q.store.get(q.big)).toMatchObject({ state: 'dismissed', dismissal: { reason: 'sent again smaller', by: 'admin' } });
    const dismissed = await agent.get('/console/quarantine?state=dismissed').expect(200);
    expect(dismissed.text).toContain('sent again smaller');
    expect(q.c.auditor.entries.at(-1)).toMatchObject({ action: 'quarantine.dismiss', targets: [q.big], outcome: 'ok' });
    expect(JSON.stringify(q.c.auditor.entries)).not.toContain('sent again smaller');
  });

  it('refuses a viewer the actions (403, audited denied) and a POST without the CSRF token (403, refused)', async () => {
    const q = withQuarantine();
    await q.ready;
    const viewer = await signedIn(q.c, VIEWER_TOKEN);
    expect((await viewer.get(`/console/quarantine/confirm-apply?eventId=${q.fits}`).expect(403)).text).toContain('needs the <strong>operator</strong> role');
    expect(q.c.auditor.entries.at(-1)).toMatchObject({ actor: 'day-viewer', action: 'quarantine.apply', targets: [q.fits], outcome: 'denied' });
    const csrf = csrfOf((await viewer.get('/console/quarantine').expect(200)).text);
    await viewer.post('/console/quarantine/dismiss').type('form').send({ eventId: q.fits, reason: 'x', csrf }).expect(403);
    expect(q.c.auditor.entries.at(-1)).toMatchObject({ action: 'quarantine.dismiss', outcome: 'denied' });
    const operator = await signedIn(q.c);
    await operator.post('/console/quarantine/apply').type('form').send({ eventId: q.fits }).expect(403);
    expect(q.c.auditor.entries.at(-1)).toMatchObject({ action: 'quarantine.apply', outcome: 'refused' });
    expect((await q.store.get(q.fits))?.state).toBe('quarantined');
  });

  it('is counted on the overview, linked to its page', async () => {
    const c = consoleApp();
    c.data.overview_.quarantined = 3;
    const page = await (await signedIn(c)).get('/console').expect(200);
    expect(page.text).toMatch(/<a href="\/console\/quarantine" id="quarantine-count">3<\/a>/);
  });
});
