// Roles on the admin API: a viewer reads but is refused (403, audited as denied) what an operator may do;
// an operator replays and dismisses (audited ok, dismissals signed with its name); ADMIN_TOKEN is still an
// operator named admin; no or an unknown token is 401; a request another middleware signed in (the console's
// session) is taken as it is, with its door.
import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { Role } from '../../src/actor.ts';
import { ADMIN_ROUTE_RULES } from '../../src/access/admin-routes.ts';
import type { AuditEntry } from '../../src/storage/audit.ts';
import { adminAccess } from '../../src/app/admin-access.ts';
import { authenticatedAs } from '../../src/app/admin-auth.ts';
import { createApp } from '../../src/app/app.ts';
import { errorMiddleware } from '../../src/http/error-middleware.ts';
import { silentLogger } from '../../src/logger.ts';
import { auditedAdmin, deadLetter } from '../support/audited-admin.ts';

describe('a viewer', () => {
  it('reads the dead letters, an event and the audit trail', async () => {
    const a = auditedAdmin();
    await deadLetter(a.f, 'ev-1');
    expect((await a.as('viewer').get('/dead-letters')).body.events.map((e: { eventId: string }) => e.eventId)).toEqual(['ev-1']);
    expect((await a.as('viewer').get('/events/ev-1')).status).toBe(200);
    expect((await a.as('viewer').get('/audit')).status).toBe(200);
    // Reads are not recorded.
    expect(await a.entries()).toEqual([]);
  });

  it('is refused a replay with 403 forbidden, the event untouched and the refusal audited as denied', async () => {
    const a = auditedAdmin();
    await deadLetter(a.f, 'ev-1');
    const res = await a.as('viewer').post('/dead-letters/ev-1/replay');
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: { code: 'forbidden', message: expect.stringContaining('operator') } });
    expect(a.f.state('ev-1')?.state).toBe('dead');
    expect(await a.entries()).toEqual([
      expect.objectContaining({ actor: 'night-desk', door: 'api', action: 'dead_letter.replay', targets: ['ev-1'], outcome: 'denied' }),
    ]);
  });

  it('is refused every state change, each one audited as denied', async () => {
    const a = auditedAdmin();
    await deadLetter(a.f, 'ev-1');
    const viewer = a.as('viewer');
    expect((await viewer.post('/dead-letters/replay', { eventType: 'appointment.created' })).status).toBe(403);
    expect((await viewer.post('/dead-letters/ev-1/dismiss', { reason: 'test data' })).status).toBe(403);
    expect((await viewer.post('/dead-letters/mappings/doctor/doc_1/dismiss', { reason: 'by hand' })).status).toBe(403);
    expect((await viewer.post('/no-such-route')).status).toBe(403);
    expect((await a.entries()).map((e) => [e.action, e.targets, e.outcome])).toEqual([
      ['dead_letter.replay_all', [], 'denied'],
      ['dead_letter.dismiss', ['ev-1'], 'denied'],
      ['mapping.dismiss', ['doctor:doc_1'], 'denied'],
      ['undeclared', [], 'denied'],
    ]);
  });
});

describe('an operator', () => {
  it('replays a dead letter, audited ok under its name with the eventId', async () => {
    const a = auditedAdmin();
    await deadLetter(a.f, 'ev-1');
    const res = await a.as('operator').post('/dead-letters/ev-1/replay');
    expect(res.status).toBe(200);
    expect(a.f.state('ev-1')?.state).toBe('pending');
    expect(await a.entries()).toEqual([
      {
        id: expect.any(Number),
        at: a.f.clock.now(),
        actor: 'integration',
        door: 'api',
        action: 'dead_letter.replay',
        targets: ['ev-1'],
        from: '127.0.0.1',
        outcome: 'ok',
      },
    ]);
  });

  it('signs a dismissal with its own name, and each outcome is recorded as its answer was', async () => {
    const a = auditedAdmin();
    await deadLetter(a.f, 'ev-1');
    const op = a.as('operator');
    expect((await op.post('/dead-letters/ev-1/dismiss', { reason: 'test clinic data' })).body.dismissed.dismissal.by).toBe('integration');
    expect((await op.post('/dead-letters/ev-1/dismiss', { reason: 'again' })).status).toBe(409);
    expect((await op.post('/dead-letters/nope/replay')).status).toBe(404);
    expect((await op.post('/dead-letters/ev-1/dismiss', { reason: '' })).status).toBe(400);
    expect((await a.entries()).map((e) => e.outcome)).toEqual(['ok', 'refused', 'not_found', 'refused']);
  });
});

describe('ADMIN_TOKEN', () => {
  it('is still an operator, named admin', async () => {
    const a = auditedAdmin();
    await deadLetter(a.f, 'ev-1');
    expect((await a.as('admin').post('/dead-letters/ev-1/replay')).status).toBe(200);
    expect((await a.entries())[0]).toMatchObject({ actor: 'admin', action: 'dead_letter.replay', outcome: 'ok' });
  });

  it('keeps working alone when an app is built without named credentials', async () => {
    const a = auditedAdmin();
    const plain = createApp({
      logger: silentLogger(),
      metrics: a.f.metrics,
      routers: [],
      adminRouters: [],
      adminToken: 'plain-admin-token-000001',
      readiness: [],
    });
    const http = request(plain.callback());
    expect((await http.get('/admin/nope').set('authorization', 'Bearer plain-admin-token-000001')).status).toBe(404);
    expect((await http.get('/admin/nope').set('authorization', 'Bearer wrong-token-0000000000')).status).toBe(401);
  });
});

describe('signing in', () => {
  it('answers 401 with no token and with an unknown one', async () => {
    const a = auditedAdmin();
    for (const res of [await a.as(undefined).get('/dead-letters'), await request(a.app.callback()).get('/admin/status').set('authorization', 'Bearer nope')]) {
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
      expect(res.headers['www-authenticate']).toContain('Bearer');
    }
  });

  it('takes a request another middleware signed in (the console session) as it is, with its door', async () => {
    const a = auditedAdmin();
    await deadLetter(a.f, 'ev-1');
    const recorded: unknown[] = [];
    const session: Middleware = async (ctx, next) => {
      if (ctx.get('cookie') === 'session=ok') authenticatedAs(ctx, { name: 'console-user', role: 'operator' }, 'console');
      await next();
    };
    const app = createApp({
      logger: silentLogger(),
      metrics: a.f.metrics,
      routers: [],
      adminRouters: [],
      adminToken: undefined,
      readiness: [],
      adminSession: session,
      auditor: { record: async (e) => void recorded.push(e), page: async () => ({ entries: [], next: null }) },
    });
    expect((await request(app.callback()).post('/admin/no-such-route').set('cookie', 'session=ok')).status).toBe(404);
    expect(recorded).toEqual([expect.objectContaining({ actor: 'console-user', door: 'console', outcome: 'not_found' })]);
    expect((await request(app.callback()).post('/admin/no-such-route')).status).toBe(401);
  });
});

describe('a GET that shows a stored body', () => {
  /** An admin router with one body-revealing GET declared as such, the actor's role taken from a header. */
  function revealing() {
    const recorded: AuditEntry[] = [];
    const admin = new Router({ prefix: '/admin' });
    admin.use(
      async (ctx, next) => {
        authenticatedAs(ctx, { name: `a-${ctx.get('x-role')}`, role: ctx.get('x-role') as Role }, 'api');
        await next();
      },
      adminAccess({
        router: admin,
        auditor: { record: async (e) => void recorded.push(e), page: async () => ({ entries: [], next: null }) },
        rules: { ...ADMIN_ROUTE_RULES, 'GET /admin/things/:id/body': { needs: 'operator', action: 'thing.body.reveal', targets: (r) => [r.params.id] } },
      }),
    );
    admin.get('/things/:id/body', (ctx) => {
      ctx.body = { body: 'stored bytes' };
    });
    admin.get('/things/:id', (ctx) => {
      ctx.body = { id: ctx.params.id };
    });
    const app = new Koa();
    app.use(errorMiddleware(silentLogger())).use(admin.routes());
    return { http: request(app.callback()), recorded };
  }

  it('needs an operator as declared, and is recorded either way; a plain read is not', async () => {
    const { http, recorded } = revealing();
    expect((await http.get('/admin/things/t1/body').set('x-role', 'viewer')).status).toBe(403);
    expect((await http.get('/admin/things/t1/body').set('x-role', 'operator')).body).toEqual({ body: 'stored bytes' });
    expect((await http.get('/admin/things/t1').set('x-role', 'viewer')).status).toBe(200);
    expect(recorded.map((e) => [e.actor, e.action, e.targets, e.outcome])).toEqual([
      ['a-viewer', 'thing.body.reveal', ['t1'], 'denied'],
      ['a-operator', 'thing.body.reveal', ['t1'], 'ok'],
    ]);
  });
});
