// An admin app with the real access checks and audit trail: named credentials (an operator, a viewer and
// ADMIN_TOKEN), a sign-in throttle and an auditor on an SQLite audit store, all on one manual clock; the
// processor's and the audit's admin routers over a processor fixture, so real dead letters can be acted on.
import type Router from '@koa/router';
import request from 'supertest';
import { createCredentialCheck, sha256Hex } from '../../src/access/credentials.ts';
import { createSignInThrottle, type ThrottleSettings } from '../../src/access/throttle.ts';
import { createAuditAdminRouter } from '../../src/audit/admin-router.ts';
import { createAuditor } from '../../src/audit/audit-trail.ts';
import type { Auditor } from '../../src/audit/auditor.ts';
import type { AuditRecord } from '../../src/storage/audit.ts';
import { createApp } from '../../src/app/app.ts';
import { silentLogger } from '../../src/logger.ts';
import { createProcessorAdminRouter } from '../../src/processor/index.ts';
import { createSqliteAuditStore } from '../../src/storage/sqlite/audit.ts';
import { processorFixture, type ProcessorFixture } from './processor-fixture.ts';

export const TOKENS = {
  admin: 'admin-token-for-tests-0001',
  operator: 'operator-token-for-tests-0002',
  viewer: 'viewer-token-for-tests-0003',
} as const;

export interface AuditedAdmin {
  f: ProcessorFixture;
  app: ReturnType<typeof createApp>;
  /** A request as `who` (no Authorization header when undefined). */
  as(who: keyof typeof TOKENS | undefined): {
    get(path: string): request.Test;
    post(path: string, body?: object): request.Test;
  };
  /** Every audit entry, oldest first, read from the store. */
  entries(): Promise<AuditRecord[]>;
}

export function auditedAdmin(opts: { throttle?: Partial<ThrottleSettings>; routers?: (f: ProcessorFixture, auditor: Auditor) => Router[] } = {}): AuditedAdmin {
  const f = processorFixture();
  const store = createSqliteAuditStore(f.db);
  const auditor = createAuditor({ store, clock: f.clock, logger: silentLogger() });
  const app = createApp({
    logger: silentLogger(),
    metrics: f.metrics,
    routers: [],
    adminRouters: [
      createProcessorAdminRouter({ deadLetters: f.stores.deadLetters, logger: silentLogger() }),
      createAuditAdminRouter({ auditor }),
      ...(opts.routers?.(f, auditor) ?? []),
    ],
    adminToken: TOKENS.admin,
    credentials: createCredentialCheck({
      adminToken: TOKENS.admin,
      credentials: [
        { name: 'integration', role: 'operator', sha256: sha256Hex(TOKENS.operator) },
        { name: 'night-desk', role: 'viewer', sha256: sha256Hex(TOKENS.viewer) },
      ],
    }),
    auditor,
    signInThrottle: createSignInThrottle({ clock: f.clock, ...(opts.throttle ? { settings: opts.throttle } : {}) }),
    readiness: [],
  });
  const http = () => request(app.callback());
  return {
    f,
    app,
    as(who) {
      const auth = who ? { authorization: `Bearer ${TOKENS[who]}` } : {};
      return {
        get: (path) => http().get(`/admin${path}`).set(auth),
        post: (path, body) =>
          http()
            .post(`/admin${path}`)
            .set(auth)
            .send(body ?? {}),
      };
    },
    entries: async () => (await store.page({ limit: 500 })).reverse(),
  };
}

/** A dead letter, at once: its body misses a required field, so the processor parks it on its first pass. */
export async function deadLetter(f: ProcessorFixture, eventId: string): Promise<string> {
  f.store({ eventId, eventType: 'appointment.created', occurredAt: '2026-01-15T09:00:00.000Z' });
  await f.processor.runOnce();
  return eventId;
}
