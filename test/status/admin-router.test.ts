// GET /admin/status beyond the components: the EMR calls' adaptive limit as it stands (lowered after a push-back),
// an HL7 v2 EMR's MLLP links, configured and connected (neither there when the runtime has none to show); and the
// events waiting for a mapping in the crosswalk.
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app/app.ts';
import { createManualClock } from '../../src/clock.ts';
import { silentLogger } from '../../src/logger.ts';
import { createMetrics } from '../../src/metrics/metrics.ts';
import { createStatusAdminRouter } from '../../src/status/admin-router.ts';
import { createDependencyStatus } from '../../src/status/dependency-status.ts';
import { createAdaptiveLimit } from '../../src/work/adaptive-limit.ts';

const TOKEN = 'status-test-admin-token-0123456789';
const database = { isWritable: () => true, writeFailure: () => undefined };

function statusOf(extra: Partial<Parameters<typeof createStatusAdminRouter>[0]>) {
  const clock = createManualClock();
  const app = createApp({
    logger: silentLogger(),
    metrics: createMetrics(),
    routers: [],
    adminRouters: [createStatusAdminRouter({ status: createDependencyStatus({ clock, logger: silentLogger() }), database, ...extra })],
    adminToken: TOKEN,
    readiness: [],
  });
  return request(app.callback())
    .get('/admin/status')
    .set({ authorization: `Bearer ${TOKEN}` })
    .expect(200);
}

describe('GET /admin/status', () => {
  it('shows the EMR calls allowed in flight, lowered after the EMR pushed back', async () => {
    const emrCalls = createAdaptiveLimit({ max: 32, clock: createManualClock() });
    const pushedBack = new Error('429');
    await emrCalls
      .run(
        () => Promise.reject(pushedBack),
        (e) => (e === pushedBack ? 0 : false),
      )
      .catch(() => undefined);
    const res = await statusOf({ emrCalls });
    expect(res.body.emrCalls).toEqual({ limit: 16, max: 32, inFlight: 0, waiting: 0 });
    expect(res.body).not.toHaveProperty('emrLinks');
  });

  it("shows an HL7 v2 EMR's links, configured and connected", async () => {
    const res = await statusOf({ emrLinks: () => ({ configured: 4, connected: 3 }) });
    expect(res.body.emrLinks).toEqual({ configured: 4, connected: 3 });
    expect(res.body).not.toHaveProperty('emrCalls');
  });

  it('shows how many events wait for a mapping, per entity type, and since when', async () => {
    const since = Date.parse('2026-01-15T09:00:00.000Z');
    const res = await statusOf({ waiting: async () => [{ entityType: 'doctor', events: 3, oldestSince: since }] });
    expect(res.body.waiting).toEqual([
      { entityType: 'patient', events: 0, since: null },
      { entityType: 'doctor', events: 3, since: '2026-01-15T09:00:00.000Z' },
      { entityType: 'location', events: 0, since: null },
    ]);
  });
});
