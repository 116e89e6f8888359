// The console's "Needs mapping" page over a real crosswalk and an EMR that keeps its doctors and locations to
// itself: the unmapped records with their waiting events and since when, filtered by type, 50 a page; the EMR's
// suggestions as choices; a mapping made through the form (CSRF, operator, audited once as `crosswalk.map` with
// door `console`) that frees the waiting events; a refusal shown on the page with status 422; a viewer reading
// without forms; an EMR that does not answer; a patient shown by its serviceId only; and the overview's count.
import { describe, expect, it } from 'vitest';
import { csrfOf, signedIn, VIEWER_TOKEN } from './support/console-app.ts';
import { crosswalkConsole } from './support/crosswalk-console.ts';

const PAGE = '/console/needs-mapping';

describe('the Needs mapping page', () => {
  it("lists each unmapped record with its name, how many events wait for it and since when, and the EMR's suggestions as choices", async () => {
    const { c, f, ids, waitingAppointments } = crosswalkConsole();
    await waitingAppointments(['apt_1', 'apt_2']);
    const since = new Date(f.clock.now()).toISOString();
    f.clock.advance(12 * 60_000);
    const agent = await signedIn(c);

    const text = (await agent.get(PAGE).expect(200)).text;
    expect(text).toContain('href="/console/needs-mapping" aria-current="page"');
    const doctor = /<tr id="rec-0">([\s\S]*?)<\/tr>/.exec(text)![1]!;
    expect(doctor).toContain('<td>doctor</td><td><code>doc_1</code><br>Dr Test Doctor</td>');
    expect(doctor).toContain('<td class="num">2</td>');
    expect(doctor).toContain(`<time datetime="${since}">`);
    expect(doctor).toContain('12 min ago');
    expect(doctor).toContain(`name="choice" value="${ids.doctor}"`);
    expect(doctor).toContain(`name="choice" value="${ids.namesake}"`);
    expect(doctor).toContain('Dr Test Doctorow');
    expect(doctor).toContain('<input id="emr-0" name="emrId"');
    expect(doctor).toContain('<input type="hidden" name="csrf"');
    expect(doctor).toContain('aria-label="Map doctor doc_1"');
    const location = /<tr id="rec-1">([\s\S]*?)<\/tr>/.exec(text)![1]!;
    expect(location).toContain('Test Clinic Room 1');
    expect(location).toContain(`value="${ids.location}"`);
    expect(text).not.toContain('id="rec-2"');

    const doctors = (await agent.get(`${PAGE}?type=doctor`).expect(200)).text;
    expect(doctors).toContain('<option value="doctor" selected>');
    expect(doctors).not.toContain('Test Clinic Room 1');
    expect((await agent.get(`${PAGE}?type=patient`).expect(200)).text).toContain('Nothing needs mapping among patients.');
    expect((await agent.get(`${PAGE}?type=nurse`)).status).toBe(400);
    // The events themselves, on the events page's state filter.
    expect((await agent.get('/console/events?state=waiting').expect(200)).text).toContain('<option value="waiting" selected>');
  });

  it('shows a patient by its serviceId only: no name or phone, and no suggestion by name', async () => {
    const { c, waitingAppointments } = crosswalkConsole({ ownsPatients: true });
    await waitingAppointments(['apt_1']);
    const agent = await signedIn(c);
    const text = (await agent.get(`${PAGE}?type=patient`).expect(200)).text;
    expect(text).toContain('<td>patient</td><td><code>pat_apt_1</code></td>');
    expect(text).toContain('No name is kept for a patient');
    expect(text).not.toContain('Test Patient One');
    expect(text).not.toContain('+15550000001');
  });

  it('maps a record through the form with a chosen suggestion: back to the list with a notice, audited once, its waiting events applied', async () => {
    const { c, f, crosswalk, ids, waitingAppointments } = crosswalkConsole();
    await crosswalk.map({ entityType: 'location', serviceId: 'loc_1' }, ids.location, 'operator', { actor: 'setup', door: 'api', from: '-' });
    const events = await waitingAppointments(['apt_1', 'apt_2']);
    const agent = await signedIn(c);
    const page = (await agent.get(`${PAGE}?type=doctor`).expect(200)).text;

    const res = await agent
      .post(`${PAGE}/map`)
      .type('form')
      .send({ entityType: 'doctor', serviceId: 'doc_1', choice: ids.doctor, emrId: '', type: 'doctor', csrf: csrfOf(page) })
      .expect(303);
    expect(res.headers.location).toBe(`${PAGE}?type=doctor`);
    const after = (await agent.get(res.headers.location!).expect(200)).text;
    expect(after).toContain(`Mapped doctor doc_1 to EMR id ${ids.doctor}; the 2 events waiting for it are taken up.`);
    expect(after).toContain('Nothing needs mapping among doctors.');
    expect(await crosswalk.get({ entityType: 'doctor', serviceId: 'doc_1' })).toMatchObject({ emrId: ids.doctor, source: 'operator' });
    expect(c.auditor.entries.filter((e) => e.action === 'crosswalk.map' && e.actor === 'admin')).toEqual([
      expect.objectContaining({ door: 'console', targets: ['doctor:doc_1'], outcome: 'ok' }),
    ]);

    await f.processor.runOnce();
    expect(events.map((id) => f.state(id)?.state)).toEqual(['applied', 'applied']);
    expect(f.emr.appointments()).toHaveLength(2);
  });

  it('maps with an EMR id typed in the free field', async () => {
    const { c, crosswalk, ids, waitingAppointments } = crosswalkConsole();
    await waitingAppointments(['apt_1']);
    const agent = await signedIn(c);
    const page = (await agent.get(PAGE).expect(200)).text;
    await agent
      .post(`${PAGE}/map`)
      .type('form')
      .send({ entityType: 'location', serviceId: 'loc_1', emrId: ` ${ids.location} `, csrf: csrfOf(page) })
      .expect(303);
    expect(await crosswalk.get({ entityType: 'location', serviceId: 'loc_1' })).toMatchObject({ emrId: ids.location });
  });

  it('shows a refusal on the page with status 422, keeping what was typed, and changes nothing', async () => {
    const { c, crosswalk, ids, waitingAppointments } = crosswalkConsole();
    await waitingAppointments(['apt_1']);
    const agent = await signedIn(c);
    const csrf = csrfOf((await agent.get(PAGE).expect(200)).text);
    const post = (form: Record<string, string>) =>
      agent
        .post(`${PAGE}/map`)
        .type('form')
        .send({ entityType: 'doctor', serviceId: 'doc_1', csrf, ...form });

    const missing = await post({ emrId: 'practitioner-emr-999' }).expect(422);
    expect(missing.text).toMatch(/<p class="error" role="alert" id="refusal">Not mapped: doctor <code>doc_1<\/code>: the EMR has no [^<]*practitioner-emr-999/);
    expect(missing.text).toContain('<input id="emr-0" name="emrId" maxlength="200" autocomplete="off" value="practitioner-emr-999" aria-invalid="true"');
    expect(missing.text).toContain('href="#emr-0">To the record</a>');
    expect(c.auditor.entries.filter((e) => e.action === 'crosswalk.map')).toEqual([expect.objectContaining({ actor: 'admin', outcome: 'refused' })]);

    expect((await post({ choice: ids.doctor, emrId: ids.namesake }).expect(422)).text).toContain('not both');
    expect((await post({ emrId: '' }).expect(422)).text).toContain('choose one of the suggestions or type the EMR id');
    expect((await post({ emrId: 'x'.repeat(201) }).expect(422)).text).toContain('emrId is longer than 200 characters');
    expect((await post({ emrId: 'a\u0007b' }).expect(422)).text).toContain('emrId holds a control character');
    expect(await crosswalk.get({ entityType: 'doctor', serviceId: 'doc_1' })).toMatchObject({ emrId: null, waitingEvents: 1 });
  });

  it('leaves a record someone mapped meanwhile as it is', async () => {
    const { c, crosswalk, ids, waitingAppointments } = crosswalkConsole();
    await waitingAppointments(['apt_1']);
    const agent = await signedIn(c);
    const csrf = csrfOf((await agent.get(PAGE).expect(200)).text);
    await crosswalk.map({ entityType: 'doctor', serviceId: 'doc_1' }, ids.namesake, 'operator', { actor: 'other', door: 'api', from: '-' });
    const res = await agent.post(`${PAGE}/map`).type('form').send({ entityType: 'doctor', serviceId: 'doc_1', choice: ids.doctor, csrf }).expect(303);
    expect((await agent.get(res.headers.location!)).text).toContain(`doctor doc_1 was mapped meanwhile, to EMR id ${ids.namesake}: nothing changed.`);
    expect(await crosswalk.get({ entityType: 'doctor', serviceId: 'doc_1' })).toMatchObject({ emrId: ids.namesake });
  });

  it('lets a viewer read the records and suggestions without a form, and refuses a viewer’s POST and a POST without the token', async () => {
    const { c, crosswalk, ids, waitingAppointments } = crosswalkConsole();
    await waitingAppointments(['apt_1']);
    const viewer = await signedIn(c, VIEWER_TOKEN);
    const text = (await viewer.get(PAGE).expect(200)).text;
    expect(text).toContain(`Dr Test Doctor <code>${ids.doctor}</code></li>`);
    expect(text).not.toContain('/needs-mapping/map');
    expect(text).not.toContain('/needs-mapping/import');
    expect(text).toContain('Importing needs the <strong>operator</strong> role.');
    await viewer
      .post(`${PAGE}/map`)
      .type('form')
      .send({ entityType: 'doctor', serviceId: 'doc_1', choice: ids.doctor, csrf: csrfOf(text) })
      .expect(403);
    expect(c.auditor.entries.at(-1)).toMatchObject({ actor: 'day-viewer', action: 'crosswalk.map', targets: ['doctor:doc_1'], outcome: 'denied' });

    const operator = await signedIn(c);
    await operator.post(`${PAGE}/map`).type('form').send({ entityType: 'doctor', serviceId: 'doc_1', choice: ids.doctor }).expect(403);
    expect(c.auditor.entries.at(-1)).toMatchObject({ actor: 'admin', action: 'crosswalk.map', outcome: 'refused' });
    expect(await crosswalk.get({ entityType: 'doctor', serviceId: 'doc_1' })).toMatchObject({ emrId: null });
  });

  it('says the EMR did not answer for suggestions, and for a mapping, without failing the page', async () => {
    const { c, f, ids, waitingAppointments } = crosswalkConsole();
    await waitingAppointments(['apt_1']);
    const agent = await signedIn(c);
    f.emr.down = true;
    const page = await agent.get(PAGE).expect(200);
    expect(page.text).toContain('The EMR did not answer: no suggestions now.');
    const res = await agent
      .post(`${PAGE}/map`)
      .type('form')
      .send({ entityType: 'doctor', serviceId: 'doc_1', emrId: ids.doctor, csrf: csrfOf(page.text) })
      .expect(503);
    expect(res.text).toMatch(/Not mapped: doctor <code>doc_1<\/code>: the EMR did not answer \([a-z_]+\); nothing changed, try again/);
    expect(c.auditor.entries.at(-1)).toMatchObject({ action: 'crosswalk.map', outcome: 'failed' });
  });

  it('shows 50 records a page, the next page by the position the first gave, and refuses one it never gave', async () => {
    const { c, f } = crosswalkConsole();
    const doctors = Array.from({ length: 51 }, (_, i) => ({ entityType: 'doctor' as const, serviceId: `doc_${String(i).padStart(2, '0')}`, name: `Dr ${i}` }));
    await f.stores.crosswalk.need(doctors);
    const agent = await signedIn(c);
    const first = (await agent.get(PAGE).expect(200)).text;
    expect(first.match(/<tr id="rec-\d+">/g)).toHaveLength(50);
    expect(first).toContain('<code>doc_49</code>');
    expect(first).not.toContain('<code>doc_50</code>');
    const next = /<a rel="next" href="([^"]+)">Next page<\/a>/.exec(first)![1]!.replaceAll('&amp;', '&');
    const second = (await agent.get(next).expect(200)).text;
    expect(second.match(/<tr id="rec-\d+">/g)).toHaveLength(1);
    expect(second).toContain('<code>doc_50</code>');
    expect(second).toContain('>First page</a>');
    expect(second).not.toContain('rel="next"');
    expect((await agent.get(`${PAGE}?after=nonsense`)).status).toBe(400);
  });

  it('escapes what the service named a record', async () => {
    const { c, f } = crosswalkConsole();
    await f.stores.crosswalk.need([{ entityType: 'location', serviceId: 'loc_<b>', name: 'Room <script>1</script>' }]);
    const agent = await signedIn(c);
    const text = (await agent.get(PAGE).expect(200)).text;
    expect(text).toContain('<code>loc_&lt;b&gt;</code><br>Room &lt;script&gt;1&lt;/script&gt;');
    expect(text).not.toContain('<script>1');
  });
});

describe('the overview', () => {
  it('shows the events waiting for a mapping beside the dead letters, with the way to the page', async () => {
    const { c } = crosswalkConsole();
    c.data.overview_.waiting = { events: 7, oldestSince: c.clock.now() - 3 * 3_600_000, ageMs: 3 * 3_600_000 };
    const agent = await signedIn(c);
    const text = (await agent.get('/console').expect(200)).text;
    expect(text).toMatch(
      /id="dead-letter-count">3<\/a> <span class="muted">events<\/span><\/dd><\/div>\s*<div><dt>Waiting for a mapping<\/dt><dd><a href="\/console\/needs-mapping" id="waiting-count">7<\/a>/,
    );
    expect(text).toContain('<span class="sub">oldest <span id="waiting-age">3.0 h</span></span>');
  });

  it('says nothing of waiting without a crosswalk', async () => {
    const { c } = crosswalkConsole();
    const agent = await signedIn(c);
    expect((await agent.get('/console').expect(200)).text).not.toContain('waiting-count');
  });
});
