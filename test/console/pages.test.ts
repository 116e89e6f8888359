// Owns what the console's pages show from the data port and the audit trail: the overview's numbers and
// its JSON, the event search and its paging, an event's history and EMR ids, dead letters, documents by
// status, mappings both ways, the audit page; every value escaped; the navigation and skip link.
import { describe, expect, it } from 'vitest';
import { consoleApp, signedIn } from './support/console-app.ts';

describe('console pages', () => {
  it('the overview shows components, open alerts, received, the inbox backlog and its age, dead letters (events and mappings), documents by status and the latency', async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    const text = (await agent.get('/console').expect(200)).text;
    expect(text).toContain('<a class="skip" href="#main">Skip to content</a>');
    expect(text).toContain('href="/console" aria-current="page"');
    expect(text).toMatch(/id="inbox-depth">4</);
    expect(text).toMatch(/oldest <span id="inbox-age">2 min</);
    expect(text).toMatch(/id="dead-letter-count">3</);
    expect(text).toMatch(/id="dead-mapping-count">2</);
    expect(text).toMatch(/id="received-24h">72</);
    expect(text).toContain('emr_unreachable: connect ECONNREFUSED');
    expect(text).toContain('<dt>Acknowledgement, p50 / p99</dt><dd>2 ms / 9 ms</dd>');
    expect(text).toContain('href="/console/documents?status=FAILED"');
    expect(text).toContain('<script src="/console/assets/uplot.iife.min.js" defer></script>');
    expect(text).toContain('data-src="/console/overview.json"');
  });

  it('the overview says nothing of an age when the inbox has no backlog', async () => {
    const c = consoleApp();
    Object.assign(c.data.overview_, { inboxDepth: 0, inboxOldestAt: null, inboxAgeMs: null });
    const agent = await signedIn(c);
    const text = (await agent.get('/console').expect(200)).text;
    expect(text).toMatch(/id="inbox-depth">0</);
    expect(text).not.toContain('inbox-age');
  });

  it('the dead-letters page lists refused mappings with their reason, escaped, and a replay and a dismissal for each', async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    const text = (await agent.get('/console/dead-letters').expect(200)).text;
    expect(text).toContain('<h2 id="mappings-h">Refused mappings</h2>');
    expect(text).toMatch(/id="dead-mappings"[\s\S]*pat_404[\s\S]*not_found: no patient pat_404/);
    expect(text).toContain('doc_&lt;b&gt;');
    expect(text).not.toContain('doc_<b>');
    expect(text).toContain('href="/console/dead-letters/mappings/confirm-replay?entityType=patient&amp;serviceId=pat_404"');
    expect(text).toContain('href="/console/dead-letters/mappings/confirm-dismiss?entityType=patient&amp;serviceId=pat_404"');
    c.data.deadMappings_.clear();
    expect((await agent.get('/console/dead-letters').expect(200)).text).toContain('No refused mappings.');
  });

  it('overview.json gives the per-minute series the chart draws', async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    const body = (await agent.get('/console/overview.json').expect(200).expect('content-type', /json/)).body;
    expect(body.perMinute).toHaveLength(1440);
    expect(body.perMinute[0]).toEqual({ minute: expect.any(Number), received: expect.any(Number), applied: expect.any(Number) });
  });

  it('events are searched by id, type and state, and the next page keeps the filters', async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    const byId = (await agent.get('/console/events?eventId=evt_dead_2').expect(200)).text;
    expect(byId).toContain('href="/console/events/evt_dead_2"');
    expect(byId).not.toContain('evt_dead_1');
    const byType = (await agent.get('/console/events?type=appointment.created&state=dead').expect(200)).text;
    expect(byType).toContain('evt_dead_1');
    expect(byType).not.toContain('evt_dead_3');
    expect(byType).toContain('<option value="dead" selected>');
    const none = (await agent.get('/console/events?eventId=nothing').expect(200)).text;
    expect(none).toContain('No event matches.');
  });

  it('a time that cannot be read is said to be ignored; a readable one is kept in the form as UTC', async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    expect((await agent.get('/console/events?since=yesterday')).text).toContain('A time could not be read');
    expect((await agent.get('/console/events?since=2026-01-15T09:00')).text).toContain('value="2026-01-15T09:00"');
  });

  it("an event's page shows its headers, state history, EMR ids and last error, and no body", async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    const text = (await agent.get('/console/events/evt_applied_1').expect(200)).text;
    expect(text).toContain('x-service-event-type');
    expect(text).toContain('<code>Patient/123</code>');
    expect(text).toMatch(/id="history"[\s\S]*pending[\s\S]*applied/);
    expect(text).not.toContain('firstName');
    const dead = (await agent.get('/console/events/evt_dead_1').expect(200)).text;
    expect(dead).toContain('EMR refused: 422');
    expect(dead).toContain('href="/console/dead-letters/confirm?eventId=evt_dead_1"');
  });

  it('every value from the data is escaped', async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    const list = (await agent.get('/console/events').expect(200)).text;
    expect(list).toContain('evt_&lt;script&gt;');
    expect(list).not.toContain('evt_<script>');
    const page = (await agent.get(`/console/events/${encodeURIComponent('evt_<script>')}`).expect(200)).text;
    expect(page).toContain('<title>Event evt_&lt;script&gt; · emr-bridge console</title>');
    const search = (await agent.get('/console/events?serviceId=%22%3E%3Cimg%20src%3Dx%3E').expect(200)).text;
    expect(search).toContain('value="&quot;&gt;&lt;img src=x&gt;"');
  });

  it('dead letters show their reason, a checkbox each, and a replay link each', async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    const text = (await agent.get('/console/dead-letters').expect(200)).text;
    expect(text).toContain('EMR refused: 422');
    expect(text.match(/name="eventId" value="evt_dead_\d"/g)).toHaveLength(3);
    expect(text).toContain('<label for="replay-type">');
    expect((await agent.get('/console/dead-letters?type=patient.updated')).text).not.toContain('evt_dead_1');
  });

  it('documents are listed by status and each has its history', async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    const failed = (await agent.get('/console/documents?status=FAILED').expect(200)).text;
    expect(failed).toContain('doc_failed_1');
    expect(failed).not.toContain('doc_sent_1');
    expect(failed).toContain('aria-current="true">FAILED');
    const one = (await agent.get('/console/documents/doc_failed_1').expect(200)).text;
    expect(one).toMatch(/id="document-history"[\s\S]*queued[\s\S]*FAILED/);
    expect(one).toContain('found in the EMR');
  });

  it('mappings are looked up by serviceId or by EMR id', async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    expect((await agent.get('/console/mappings?serviceId=pat_1')).text).toContain('<code>Patient/123</code>');
    expect((await agent.get('/console/mappings?emrId=123')).text).toContain('<code>pat_1</code>');
    expect((await agent.get('/console/mappings?emrId=999')).text).toContain('No mapping for that id.');
    expect((await agent.get('/console/mappings')).text).not.toContain('Found');
  });

  it('the audit page lists entries newest first and filters them', async () => {
    const c = consoleApp();
    const agent = await signedIn(c);
    await agent.get('/console/dead-letters/confirm?eventId=evt_dead_1');
    const text = (await agent.get('/console/audit').expect(200)).text;
    expect(text).toMatch(/id="audit"[\s\S]*sign_in/);
    expect((await agent.get('/console/audit?action=sign_out')).text).toContain('No entries.');
  });
});
