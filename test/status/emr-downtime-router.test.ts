// POST and DELETE /admin/emr/downtime through the real admin door: an operator starts and ends a planned EMR
// downtime, each change audited (`emr_downtime.start` with the time, never the reason; `emr_downtime.end`); a
// viewer reads it and is refused a change (403, audited `denied`); bad times and reasons are refused (400).
// /admin/status shows the EMR with its downtime, and /readyz stays 200, saying `downtime`, until when and why.
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app/app.ts';
import { silentLogger } from '../../src/logger.ts';
import { createStatusAdminRouter } from '../../src/status/admin-router.ts';
import { createDependencyStatus } from '../../src/status/dependency-status.ts';
import { createEmrDowntime } from '../../src/status/emr-downtime.ts';
import { createEmrDowntimeAdminRouter } from '../../src/status/emr-downtime-router.ts';
import { createSqliteEmrDowntimeStore } from '../../src/storage/sqlite/emr-downtime.ts';
import { parseDowntimeWindows } from '../../src/work/downtime-windows.ts';
import { auditedAdmin, TOKENS } from '../support/audited-admin.ts';

const HOUR = 3_600_000;

async function downtimeAdmin() {
  let downtime!: ReturnType<typeof createEmrDowntime>;
  const admin = auditedAdmin({
    routers: (f) => {
      downtime = createEmrDowntime({ clock: f.clock, logger: silentLogger(), windows: parseDowntimeWindows('0 2 * * SUN@America/New_York/PT2H').windows });
      return [createEmrDowntimeAdminRouter({ downtime, clock: f.clock })];
    },
  });
  await downtime.attachStore(createSqliteEmrDowntimeStore(admin.f.db));
  const del = (who: keyof typeof TOKENS) =>
    request(admin.app.callback())
      .delete('/admin/emr/downtime')
      .set({ authorization: `Bearer ${TOKENS[who]}` });
  return { ...admin, downtime, del };
}

describe('POST and DELETE /admin/emr/downtime', () => {
  it('an operator starts a downtime until a time with a reason, and ends it; each is audited without the reason', async () => {
    const a = await downtimeAdmin();
    const until = new Date(a.f.clock.now() + 2 * HOUR).toISOString();
    const started = await a.as('operator').post('/emr/downtime', { until, reason: 'EMR upgrade to 2026.1' }).expect(200);
    expect(started.body).toEqual({ downtime: { until, reason: 'EMR upgrade to 2026.1', source: 'operator' } });
    const read = await a.as('viewer').get('/emr/downtime').expect(200);
    expect(read.body).toMatchObject({
      downtime: { until, reason: 'EMR upgrade to 2026.1', source: 'operator' },
      windows: ['0 2 * * SUN@America/New_York/PT2H'],
      // 2026-01-15 is a Thursday; the next Sunday 02:00 EST is 07:00Z on the 18th.
      next: { start: '2026-01-18T07:00:00.000Z', until: '2026-01-18T09:00:00.000Z', window: '0 2 * * SUN@America/New_York/PT2H' },
    });

    const ended = await a.del('operator').expect(200);
    expect(ended.body).toEqual({ ended: true, downtime: null });
    expect((await a.del('operator').expect(200)).body).toEqual({ ended: false, downtime: null });

    const entries = (await a.entries()).filter((e) => e.action.startsWith('emr_downtime.'));
    expect(entries.map((e) => [e.actor, e.action, e.targets, e.outcome])).toEqual([
      ['integration', 'emr_downtime.start', [`until:${until}`], 'ok'],
      ['integration', 'emr_downtime.end', [], 'ok'],
      ['integration', 'emr_downtime.end', [], 'ok'],
    ]);
    expect(JSON.stringify(entries)).not.toContain('upgrade');
  });

  it('refuses a viewer (403, audited `denied`), leaving nothing changed', async () => {
    const a = await downtimeAdmin();
    const until = new Date(a.f.clock.now() + HOUR).toISOString();
    await a.as('viewer').post('/emr/downtime', { until, reason: 'no' }).expect(403);
    await a.del('viewer').expect(403);
    expect(a.downtime.current()).toBeUndefined();
    const denied = (await a.entries()).filter((e) => e.outcome === 'denied');
    expect(denied.map((e) => [e.actor, e.action])).toEqual([
      ['night-desk', 'emr_downtime.start'],
      ['night-desk', 'emr_downtime.end'],
    ]);
  });

  it('refuses a time without a zone, one that passed or is more than 31 days away, and a missing reason (400)', async () => {
    const a = await downtimeAdmin();
    const now = a.f.clock.now();
    for (const body of [
      { until: '2026-01-15T12:00:00', reason: 'x' },
      { until: new Date(now - 1).toISOString(), reason: 'x' },
      { until: new Date(now + 32 * 24 * HOUR).toISOString(), reason: 'x' },
      { until: new Date(now + HOUR).toISOString(), reason: '  ' },
      { until: new Date(now + HOUR).toISOString(), reason: 'x', extra: true },
    ]) {
      const res = await a.as('operator').post('/emr/downtime', body).expect(400);
      expect(res.body.error.code, JSON.stringify(body)).toBe('invalid_request');
    }
    expect(a.downtime.current()).toBeUndefined();
    expect((await a.entries()).filter((e) => e.action === 'emr_downtime.start').every((e) => e.outcome === 'refused')).toBe(true);
  });

  it('ends a scheduled window early, later windows still counting', async () => {
    const a = await downtimeAdmin();
    // Sunday 2026-01-18, 02:30 EST: in the window.
    a.f.clock.set(Date.parse('2026-01-18T07:30:00.000Z'));
    expect(a.downtime.current()).toMatchObject({ source: 'schedule', reason: 'planned window 0 2 * * SUN@America/New_York/PT2H (EMR_DOWNTIME)' });
    expect((await a.del('operator').expect(200)).body).toEqual({ ended: true, downtime: null });
    a.f.clock.set(Date.parse('2026-01-18T08:30:00.000Z'));
    expect(a.downtime.current()).toBeUndefined();
    a.f.clock.set(Date.parse('2026-01-25T07:30:00.000Z'));
    expect(a.downtime.current()).toMatchObject({ source: 'schedule', until: Date.parse('2026-01-25T09:00:00.000Z') });
  });
});

describe('the EMR in planned downtime on /admin/status and /readyz', () => {
  it('shows the downtime on the EMR component, and /readyz stays 200 without asking the EMR', async () => {
    const a = await downtimeAdmin();
    const until = a.f.clock.now() + HOUR;
    await a.downtime.start(until, 'EMR upgrade');
    const status = createDependencyStatus({ clock: a.f.clock, logger: silentLogger(), downtime: (n) => (n === 'emr' ? a.downtime.current() : undefined) });
    // A call failing meanwhile raises no incident.
    status.failing('emr', 'emr_unavailable: connection refused');
    let pinged = 0;
    const app = createApp({
      logger: silentLogger(),
      metrics: a.f.metrics,
      routers: [],
      adminRouters: [createStatusAdminRouter({ status, database: { isWritable: () => true, writeFailure: () => undefined } })],
      adminToken: TOKENS.admin,
      readiness: [
        { name: 'database', check: () => true },
        {
          name: 'emr',
          advisory: true,
          check: async () => {
            pinged++;
            return false;
          },
          downtime: () => a.downtime.current(),
        },
      ],
    });
    const http = request(app.callback());
    const s = await http
      .get('/admin/status')
      .set({ authorization: `Bearer ${TOKENS.admin}` })
      .expect(200);
    expect(s.body.components.find((c: { name: string }) => c.name === 'emr')).toEqual({
      name: 'emr',
      ok: true,
      reason: null,
      since: expect.any(String),
      downtime: { until: new Date(until).toISOString(), reason: 'EMR upgrade' },
    });
    const ready = await http.get('/readyz').expect(200);
    expect(ready.body).toEqual({
      status: 'ready',
      checks: { database: 'ok', emr: 'downtime' },
      downtime: { emr: { until: new Date(until).toISOString(), reason: 'EMR upgrade' } },
    });
    expect(pinged).toBe(0);
    await a.downtime.end();
    expect((await http.get('/readyz').expect(200)).body).toEqual({ status: 'ready', checks: { database: 'ok', emr: 'failing' } });
    expect(pinged).toBe(1);
  });
});
