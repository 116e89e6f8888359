// The overview: each component's state and open alerts, what was received (acknowledged: stored in the inbox)
// over 24 hours beside the inbox backlog and its age, what was applied, the dead letters (events, and mappings
// the service refused) beside the events waiting for a mapping, documents by status, the acknowledgement
// latency, and a chart of events received and applied per minute over 24 hours (drawn by assets/overview.js with
// uPlot from GET /console/overview.json; the numbers are on the page without it).
import type Router from '@koa/router';
import type { ConsoleContext } from '../deps.ts';
import type { Overview } from '../data.ts';
import { badge, duration, when } from '../format.ts';
import { sendPage } from '../guard.ts';
import { html, query } from '../html.ts';
import { DOWNTIME_PAGE, downtimeLine } from './emr-downtime.ts';
import { NEEDS_MAPPING_PAGE } from './needs-mapping.ts';

/** The EMR's planned downtime in force, above everything; and the way to start or end one. */
function downtimeBanner(o: Overview, withPage: boolean) {
  const emr = o.components.find((c) => c.name === 'emr');
  const link = withPage ? html` <a href="${DOWNTIME_PAGE}" id="downtime-link">${emr?.downtime ? 'End it…' : 'Plan one…'}</a>` : '';
  if (emr?.downtime) return html`<p class="notice" id="emr-downtime" role="status">${downtimeLine(emr.downtime)}.${link}</p>`;
  return withPage ? html`<p class="muted">EMR downtime: none in force.${link}</p>` : '';
}

function components(o: Overview) {
  const rows = o.components.map(
    (c) =>
      html`<tr><th scope="row">${c.name}</th><td>${badge(c.downtime ? 'downtime' : c.ok ? 'ok' : 'failing')}</td><td>${c.downtime ? downtimeLine(c.downtime) : (c.reason ?? '')}</td><td>${when(c.since)}</td></tr>`,
  );
  return html`<section class="card" aria-labelledby="components-h"><h2 id="components-h">Components</h2>
<table><thead><tr><th scope="col">Component</th><th scope="col">State</th><th scope="col">Reason</th><th scope="col">Since</th></tr></thead>
<tbody>${rows}</tbody></table></section>`;
}

function alerts(o: Overview) {
  if (o.openAlerts.length === 0) return html`<p class="good-note">No open alerts.</p>`;
  return html`<ul class="alerts" role="list">${o.openAlerts.map((a) => html`<li><strong>${a.name}</strong> failing${a.since ? html` since ${when(a.since)}` : ''}: ${a.reason ?? 'no reason given'}</li>`)}</ul>`;
}

function numbers(o: Overview) {
  const latency = o.ackLatencyMs ? `${duration(o.ackLatencyMs.p50)} / ${duration(o.ackLatencyMs.p99)}` : 'none yet';
  const totals = o.perMinute.reduce((t, m) => ({ received: t.received + m.received, applied: t.applied + m.applied }), { received: 0, applied: 0 });
  const age = o.inboxAgeMs === null ? html`` : html` <span class="muted">oldest <span id="inbox-age">${duration(o.inboxAgeMs)}</span></span>`;
  return html`<dl class="numbers">
<div><dt>Received, 24 h</dt><dd id="received-24h">${totals.received}</dd></div>
<div><dt>Inbox backlog</dt><dd><span id="inbox-depth">${o.inboxDepth}</span>${age}</dd></div>
<div><dt>Applied, 24 h</dt><dd id="applied-24h">${totals.applied}</dd></div>
<div><dt>Dead letters</dt><dd><a href="/console/dead-letters" id="dead-letter-count">${o.deadLetters}</a> <span class="muted">events</span></dd></div>
${waiting(o)}
<div><dt>Refused mappings</dt><dd><a href="/console/dead-letters#mappings-h" id="dead-mapping-count">${o.deadMappings}</a></dd></div>
${o.quarantined !== undefined ? html`<div><dt>Quarantined</dt><dd><a href="/console/quarantine" id="quarantine-count">${o.quarantined}</a></dd></div>` : ''}
<div><dt>Acknowledgement, p50 / p99</dt><dd>${latency}</dd></div>
</dl>`;
}

/** Events waiting for a person to map a record, beside the dead letters; the way to the page that maps them. */
function waiting(o: Overview) {
  if (!o.waiting) return '';
  const age = o.waiting.ageMs === null ? html`` : html`<span class="sub">oldest <span id="waiting-age">${duration(o.waiting.ageMs)}</span></span>`;
  return html`<div><dt>Waiting for a mapping</dt><dd><a href="${NEEDS_MAPPING_PAGE}" id="waiting-count">${o.waiting.events}</a> <span class="muted">events</span>${age}</dd></div>`;
}

function documents(o: Overview) {
  const entries = Object.entries(o.documentsByStatus);
  if (entries.length === 0) return html`<p class="muted">No documents in the outbox.</p>`;
  return html`<table><thead><tr><th scope="col">Status</th><th scope="col" class="num">Documents</th></tr></thead><tbody>${entries.map(
    ([status, n]) => html`<tr><td><a href="/console/documents${query({ status })}">${badge(status)}</a></td><td class="num">${n}</td></tr>`,
  )}</tbody></table>`;
}

export function registerOverview(router: Router, c: ConsoleContext): void {
  router.get('/', async (ctx) => {
    const o = await c.data.overview();
    await sendPage(c, ctx, {
      title: 'Overview',
      current: 'overview',
      styles: ['uplot.min.css'],
      scripts: ['uplot.iife.min.js', 'overview.js'],
      body: html`${downtimeBanner(o, c.emrDowntime !== undefined)}<div class="grid">
<section class="card" aria-labelledby="numbers-h"><h2 id="numbers-h">Now</h2>${numbers(o)}<h3>Open alerts</h3>${alerts(o)}</section>
${components(o)}
</div>
<section class="card" aria-labelledby="chart-h"><h2 id="chart-h">Events per minute, last 24 hours</h2>
<div id="chart" class="chart" data-src="/console/overview.json" role="img" aria-describedby="chart-summary"></div>
<p id="chart-summary" class="muted" aria-live="polite">The chart needs JavaScript; the totals are above.</p>
</section>
<section class="card" aria-labelledby="docs-h"><h2 id="docs-h">Documents by status</h2>${documents(o)}</section>`,
    });
  });
  router.get('/overview.json', async (ctx) => {
    ctx.body = await c.data.overview();
  });
}
