// The console's planned EMR downtime: its page, the start button through a confirmation page and a POST with
// the CSRF token (audited `emr_downtime.start` with the time, never the reason), the end button the same way
// (`emr_downtime.end`), a viewer refused at the confirmation page (audited `denied`), and the overview's line
// "EMR downtime until …, reason". The downtime is the real component over an SQLite store.
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { silentLogger } from '../../src/logger.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import { openDatabase } from '../../src/sqlite/open.ts';
import { createEmrDowntime } from '../../src/status/emr-downtime.ts';
import { createSqliteEmrDowntimeStore } from '../../src/storage/sqlite/emr-downtime.ts';
import { parseDowntimeWindows } from '../../src/work/downtime-windows.ts';
import { consoleApp, csrfOf, signedIn, VIEWER_TOKEN } from './support/console-app.ts';
import { T0 } from './support/fakes.ts';

async function withDowntime() {
  const clock = createManualClock(T0);
  const downtime = createEmrDowntime({ clock, logger: silentLogger(), windows: parseDowntimeWindows('0 2 * * SUN@UTC/PT2H').windows });
  await downtime.attachStore(createSqliteEmrDowntimeStore(openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS })));
  return { c: consoleApp({ clock, emrDowntime: downtime }), downtime, clock };
}

const inTwoHours = (now: number) => new Date(now + 2 * 3_600_000).toISOString().slice(0, 16);

describe('the EMR downtime page', () => {
  it('starts a downtime through a confirmation page, audited with its time and not its reason', async () => {
    const { c, downtime, clock } = await withDowntime();
    const agent = await signedIn(c);
    const page = await agent.get('/console/emr-downtime').expect(200);
    expect(page.text).toContain('The EMR is not in planned downtime.');
    expect(page.text).toContain('0 2 * * SUN@UTC/PT2H');

    const until = inTwoHours(clock.now());
    const confirm = await agent.get(`/console/emr-downtime/confirm?until=${until}&reason=${encodeURIComponent('EMR upgrade to 2026.1')}`).expect(200);
    expect(confirm.text).toContain('Start the downtime');
    expect(confirm.text).toContain('EMR upgrade to 2026.1');
    expect(downtime.current()).toBeUndefined();

    const res = await agent
      .post('/console/emr-downtime/start')
      .type('form')
      .send({ until: `${until}:00.000Z`, reason: 'EMR upgrade to 2026.1', csrf: csrfOf(confirm.text) })
      .expect(303);
    expect(res.headers.location).toBe('/console/emr-downtime');
    expect(downtime.current()).toEqual({ until: Date.parse(`${until}:00.000Z`), reason: 'EMR upgrade to 2026.1', source: 'operator' });
    const after = await agent.get('/console/emr-downtime').expect(200);
    expect(after.text).toContain('EMR downtime started');
    expect(after.text).toMatch(/EMR downtime until <time[^>]*>[^<]+<\/time>, EMR upgrade to 2026\.1/);
    const entry = c.auditor.entries.at(-1)!;
    expect(entry).toMatchObject({ actor: 'admin', door: 'console', action: 'emr_downtime.start', targets: [`until:${until}:00.000Z`], outcome: 'ok' });
    expect(JSON.stringify(entry)).not.toContain('upgrade');
  });

  it('ends the downtime in force through a confirmation page, audited `emr_downtime.end`', async () => {
    const { c, downtime, clock } = await withDowntime();
    await downtime.start(clock.now() + 3_600_000, 'EMR upgrade');
    const agent = await signedIn(c);
    const confirm = await agent.get('/console/emr-downtime/confirm-end').expect(200);
    expect(confirm.text).toContain('End the downtime');
    expect(downtime.current()).toBeDefined();
    await agent
      .post('/console/emr-downtime/end')
      .type('form')
      .send({ csrf: csrfOf(confirm.text) })
      .expect(303);
    expect(downtime.current()).toBeUndefined();
    expect(c.auditor.entries.at(-1)).toMatchObject({ action: 'emr_downtime.end', targets: [], outcome: 'ok' });
    expect((await agent.get('/console/emr-downtime')).text).toContain('EMR downtime ended');
  });

  it('refuses a time that passed, a missing reason, a POST without the CSRF token, and a viewer', async () => {
    const { c, downtime, clock } = await withDowntime();
    const agent = await signedIn(c);
    const past = new Date(clock.now() - 60_000).toISOString().slice(0, 16);
    expect((await agent.get(`/console/emr-downtime/confirm?until=${past}&reason=x`)).status).toBe(400);
    expect((await agent.get(`/console/emr-downtime/confirm?until=${inTwoHours(clock.now())}`)).status).toBe(400);
    await agent
      .post('/console/emr-downtime/start')
      .type('form')
      .send({ until: inTwoHours(clock.now()), reason: 'x' })
      .expect(403);
    expect(c.auditor.entries.at(-1)).toMatchObject({ action: 'emr_downtime.start', outcome: 'refused' });

    const viewer = await signedIn(c, VIEWER_TOKEN);
    expect((await viewer.get(`/console/emr-downtime/confirm?until=${inTwoHours(clock.now())}&reason=x`)).status).toBe(403);
    expect(c.auditor.entries.at(-1)).toMatchObject({ actor: 'day-viewer', action: 'emr_downtime.start', outcome: 'denied' });
    expect((await viewer.get('/console/emr-downtime/confirm-end')).status).toBe(403);
    expect(downtime.current()).toBeUndefined();
  });

  it('shows on the overview: "EMR downtime until …, reason", with the way to the page', async () => {
    const { c } = await withDowntime();
    const until = T0 + 3_600_000;
    c.data.overview_.components = c.data.overview_.components.map((x) =>
      x.name === 'emr' ? { ...x, ok: true, downtime: { until, reason: 'EMR upgrade' } } : x,
    );
    const agent = await signedIn(c);
    const overview = await agent.get('/console').expect(200);
    expect(overview.text).toContain(`EMR downtime until <time datetime="${new Date(until).toISOString()}">`);
    expect(overview.text).toContain(', EMR upgrade.');
    expect(overview.text).toContain('href="/console/emr-downtime"');
    expect(overview.text).toContain('badge-wait">downtime<');
  });
});
