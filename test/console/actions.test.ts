// Owns the console's actions and who may do them: CSRF on every POST (a forged one refused 403 and
// audited), the operator role for replays, retries and showing a body (a viewer refused 403 and audited
// `denied`), the confirmation step of each action, and the audit entry each action leaves (door `console`).
import { describe, expect, it } from 'vitest';
import { consoleApp, csrfOf, signedIn, VIEWER_TOKEN } from './support/console-app.ts';

describe('CSRF', () => {
  it('a POST without the token is refused 403 and audited `refused`; nothing is done', async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    const res = await agent.post('/console/dead-letters/replay').type('form').send({ eventId: 'evt_dead_1' }).expect(403);
    expect(res.text).toContain('Form refused');
    expect(c.actions.calls).toEqual([]);
    expect(c.auditor.entries.at(-1)).toMatchObject({
      actor: 'admin',
      door: 'console',
      action: 'dead_letter.replay',
      targets: ['evt_dead_1'],
      outcome: 'refused',
    });
  });

  it("another session's token, a wrong token, or a JSON body are refused alike", async () => {
    const c = consoleApp();
    const mine = await signedIn(c);
    const other = await signedIn(c);
    const theirs = csrfOf((await other.get('/console').expect(200)).text);
    await mine.post('/console/documents/doc_failed_1/retry').type('form').send({ csrf: theirs }).expect(403);
    await mine.post('/console/documents/doc_failed_1/retry').type('form').send({ csrf: 'x' }).expect(403);
    const own = csrfOf((await mine.get('/console').expect(200)).text);
    await mine.post('/console/documents/doc_failed_1/retry').send({ csrf: own }).expect(403);
    expect(c.actions.calls).toEqual([]);
    expect(c.auditor.entries.filter((e) => e.outcome === 'refused')).toHaveLength(3);
  });

  it('a POST without a session goes to sign-in and does nothing', async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    const csrf = csrfOf((await agent.get('/console').expect(200)).text);
    c.clock.advance(31 * 60_000);
    const res = await agent.post('/console/dead-letters/replay').type('form').send({ eventId: 'evt_dead_1', csrf }).expect(303);
    expect(res.headers.location).toBe('/console/sign-in?m=expired');
    expect(c.actions.calls).toEqual([]);
  });
});

describe('operator actions', () => {
  it('replaying one dead letter: a confirmation page, then the replay, audited with its eventId', async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    const confirm = await agent.get('/console/dead-letters/confirm?eventId=evt_dead_1').expect(200);
    expect(confirm.text).toContain('Replay 1 event');
    expect(c.actions.calls).toEqual([]);
    const res = await agent
      .post('/console/dead-letters/replay')
      .type('form')
      .send({ eventId: 'evt_dead_1', csrf: csrfOf(confirm.text) })
      .expect(303);
    expect(res.headers.location).toBe('/console/dead-letters');
    expect(c.actions.calls).toEqual(['replay evt_dead_1']);
    expect((await agent.get('/console/dead-letters')).text).toContain('Replayed 1 of 1.');
    expect(c.auditor.entries.at(-1)).toMatchObject({ actor: 'admin', door: 'console', action: 'dead_letter.replay', targets: ['evt_dead_1'], outcome: 'ok' });
  });

  it('replaying a selection names every eventId, and says which were no longer dead letters', async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    const confirm = await agent.get('/console/dead-letters/confirm?eventId=evt_dead_1&eventId=evt_dead_2&eventId=evt_applied_1').expect(200);
    expect(confirm.text).toContain('Replay 3 events');
    await agent
      .post('/console/dead-letters/replay')
      .type('form')
      .send(`eventId=evt_dead_1&eventId=evt_dead_2&eventId=evt_applied_1&csrf=${encodeURIComponent(csrfOf(confirm.text))}`)
      .expect(303);
    expect((await agent.get('/console/dead-letters')).text).toContain('Replayed 2 of 3. 1 no longer a dead letter: evt_applied_1.');
    expect(c.auditor.entries.at(-1)).toMatchObject({ action: 'dead_letter.replay', targets: ['evt_dead_1', 'evt_dead_2', 'evt_applied_1'], outcome: 'ok' });
  });

  it('"replay selected" with nothing selected comes back with a message', async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    expect((await agent.get('/console/dead-letters/confirm').expect(303)).headers.location).toBe('/console/dead-letters');
    expect((await agent.get('/console/dead-letters')).text).toContain('Select at least one dead letter');
  });

  it('replaying all of a type confirms with the count, then replays that type only', async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    const confirm = await agent.get('/console/dead-letters/confirm-type?eventType=appointment.created').expect(200);
    expect(confirm.text).toContain('(2 now)');
    await agent
      .post('/console/dead-letters/replay-type')
      .type('form')
      .send({ eventType: 'appointment.created', csrf: csrfOf(confirm.text) })
      .expect(303);
    expect(c.actions.calls).toEqual(['replayAll appointment.created']);
    expect(c.data.events_.get('evt_dead_3')!.state).toBe('dead');
    expect(c.auditor.entries.at(-1)).toMatchObject({ action: 'dead_letter.replay_all', targets: ['appointment.created'], outcome: 'ok' });
  });

  it('retrying a FAILED document: confirmation, retry, back on its page with the outcome; a SENT one offers none', async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    const page = await agent.get('/console/documents/doc_failed_1').expect(200);
    expect(page.text).toContain('/console/documents/doc_failed_1/confirm-retry');
    const confirm = await agent.get('/console/documents/doc_failed_1/confirm-retry').expect(200);
    const res = await agent
      .post('/console/documents/doc_failed_1/retry')
      .type('form')
      .send({ csrf: csrfOf(confirm.text) })
      .expect(303);
    expect(res.headers.location).toBe('/console/documents/doc_failed_1');
    expect((await agent.get(res.headers.location!)).text).toContain('The document is queued to be sent again.');
    expect(c.auditor.entries.at(-1)).toMatchObject({ action: 'document.retry', targets: ['doc_failed_1'], outcome: 'ok' });
    expect((await agent.get('/console/documents/doc_sent_1')).text).toContain('No retry is possible');
    expect((await agent.get('/console/documents/doc_sent_1/confirm-retry')).status).toBe(409);
  });

  it('replaying a refused mapping: a confirmation page, then the replay, audited `mapping.replay` with entityType:serviceId', async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    const confirm = await agent.get('/console/dead-letters/mappings/confirm-replay?entityType=patient&serviceId=pat_404').expect(200);
    expect(confirm.text).toContain('Replay the mapping');
    expect(c.actions.calls).toEqual([]);
    const res = await agent
      .post('/console/dead-letters/mappings/replay')
      .type('form')
      .send({ entityType: 'patient', serviceId: 'pat_404', csrf: csrfOf(confirm.text) })
      .expect(303);
    expect(res.headers.location).toBe('/console/dead-letters');
    expect(c.actions.calls).toEqual(['replayMapping patient/pat_404']);
    expect((await agent.get('/console/dead-letters')).text).toContain('The patient mapping pat_404 is queued to be posted again.');
    expect(c.auditor.entries.at(-1)).toMatchObject({ actor: 'admin', door: 'console', action: 'mapping.replay', targets: ['patient:pat_404'], outcome: 'ok' });
    // Again: no longer refused.
    await agent
      .post('/console/dead-letters/mappings/replay')
      .type('form')
      .send({ entityType: 'patient', serviceId: 'pat_404', csrf: csrfOf(confirm.text) })
      .expect(303);
    expect((await agent.get('/console/dead-letters')).text).toContain('no longer a refused mapping');
    expect(c.auditor.entries.at(-1)).toMatchObject({ action: 'mapping.replay', outcome: 'failed' });
  });

  it('dismissing a refused mapping needs a reason, kept with the mapping and out of the audit trail', async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    const confirm = await agent.get('/console/dead-letters/mappings/confirm-dismiss?entityType=doctor&serviceId=doc_%3Cb%3E').expect(200);
    expect(confirm.text).toContain('doc_&lt;b&gt;');
    expect(confirm.text).toContain('name="reason" required');
    const csrf = csrfOf(confirm.text);
    await agent.post('/console/dead-letters/mappings/dismiss').type('form').send({ entityType: 'doctor', serviceId: 'doc_<b>', reason: ' ', csrf }).expect(400);
    expect(c.auditor.entries.at(-1)).toMatchObject({ action: 'mapping.dismiss', targets: ['doctor:doc_<b>'], outcome: 'failed' });
    await agent
      .post('/console/dead-letters/mappings/dismiss')
      .type('form')
      .send({ entityType: 'doctor', serviceId: 'doc_<b>', reason: 'mapped by hand at the service', csrf })
      .expect(303);
    expect(c.actions.calls).toEqual(['dismissMapping doctor/doc_<b> mapped by hand at the service admin']);
    expect(c.auditor.entries.at(-1)).toMatchObject({ action: 'mapping.dismiss', targets: ['doctor:doc_<b>'], outcome: 'ok' });
    expect(JSON.stringify(c.auditor.entries)).not.toContain('by hand');
    // Not a mapping at all: a 400 page, nothing done.
    await agent.get('/console/dead-letters/mappings/confirm-replay?entityType=invoice&serviceId=x').expect(400);
  });

  it("showing an event's body is a POST, audited `event.body.reveal`, and the page shows whose eyes it was for", async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    const page = await agent.get('/console/events/evt_applied_1').expect(200);
    expect(page.text).not.toContain('Ada');
    expect(page.text).toContain('id="show-body"');
    const shown = await agent
      .post('/console/events/evt_applied_1/body')
      .type('form')
      .send({ csrf: csrfOf(page.text) })
      .expect(200);
    expect(shown.text).toContain('&quot;firstName&quot;: &quot;Ada&quot;');
    expect(shown.headers['cache-control']).toBe('no-store');
    expect(c.auditor.entries.at(-1)).toMatchObject({ actor: 'admin', action: 'event.body.reveal', targets: ['evt_applied_1'], outcome: 'ok' });
  });

  it('an action on something that does not exist is a 404 page, audited `not_found`', async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    const csrf = csrfOf((await agent.get('/console').expect(200)).text);
    await agent.post('/console/events/evt_missing/body').type('form').send({ csrf }).expect(404);
    expect(c.auditor.entries.at(-1)).toMatchObject({ action: 'event.body.reveal', targets: ['evt_missing'], outcome: 'not_found' });
  });
});

describe('a viewer', () => {
  it('is denied a replay at the confirmation step and at the POST, each audited `denied`', async () => {
    const c = consoleApp();
    const agent = await signedIn(c, VIEWER_TOKEN);
    const list = await agent.get('/console/dead-letters').expect(200);
    const denied = await agent.get('/console/dead-letters/confirm?eventId=evt_dead_1').expect(403);
    expect(denied.text).toContain('needs the <strong>operator</strong> role');
    await agent
      .post('/console/dead-letters/replay')
      .type('form')
      .send({ eventId: 'evt_dead_1', csrf: csrfOf(list.text) })
      .expect(403);
    expect(c.actions.calls).toEqual([]);
    expect(c.auditor.entries.filter((e) => e.outcome === 'denied')).toEqual([
      expect.objectContaining({ actor: 'day-viewer', door: 'console', action: 'dead_letter.replay', targets: ['evt_dead_1'] }),
      expect.objectContaining({ actor: 'day-viewer', door: 'console', action: 'dead_letter.replay', targets: ['evt_dead_1'] }),
    ]);
  });

  it('reads every page but never a body, and cannot retry a document', async () => {
    const c = consoleApp();
    const agent = await signedIn(c, VIEWER_TOKEN);
    for (const path of [
      '/console',
      '/console/events',
      '/console/events/evt_dead_1',
      '/console/dead-letters',
      '/console/documents',
      '/console/mappings',
      '/console/audit',
    ])
      expect((await agent.get(path)).status, path).toBe(200);
    const page = await agent.get('/console/events/evt_applied_1');
    expect(page.text).toContain('needs the operator role');
    const res = await agent
      .post('/console/events/evt_applied_1/body')
      .type('form')
      .send({ csrf: csrfOf(page.text) })
      .expect(403);
    expect(res.text).not.toContain('Ada');
    await agent.get('/console/documents/doc_failed_1/confirm-retry').expect(403);
    await agent
      .post('/console/documents/doc_failed_1/retry')
      .type('form')
      .send({ csrf: csrfOf(page.text) })
      .expect(403);
    expect(c.actions.calls).toEqual([]);
    expect(c.auditor.entries.filter((e) => e.outcome === 'denied').map((e) => e.action)).toEqual(['event.body.reveal', 'document.retry', 'document.retry']);
  });

  it("is denied a refused mapping's replay and dismissal, at the confirmation step and at the POST, each audited `denied`", async () => {
    const c = consoleApp();
    const agent = await signedIn(c, VIEWER_TOKEN);
    const list = await agent.get('/console/dead-letters').expect(200);
    const key = 'entityType=patient&serviceId=pat_404';
    await agent.get(`/console/dead-letters/mappings/confirm-replay?${key}`).expect(403);
    await agent.get(`/console/dead-letters/mappings/confirm-dismiss?${key}`).expect(403);
    const form = { entityType: 'patient', serviceId: 'pat_404', reason: 'no', csrf: csrfOf(list.text) };
    await agent.post('/console/dead-letters/mappings/replay').type('form').send(form).expect(403);
    await agent.post('/console/dead-letters/mappings/dismiss').type('form').send(form).expect(403);
    expect(c.actions.calls).toEqual([]);
    expect(c.auditor.entries.filter((e) => e.outcome === 'denied').map((e) => [e.action, e.targets])).toEqual([
      ['mapping.replay', ['patient:pat_404']],
      ['mapping.dismiss', ['patient:pat_404']],
      ['mapping.replay', ['patient:pat_404']],
      ['mapping.dismiss', ['patient:pat_404']],
    ]);
  });
});
