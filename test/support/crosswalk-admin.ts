// The crosswalk's admin API over HTTP with the real access checks and audit trail (./audited-admin.ts): the
// crosswalk module over a processor fixture's stores and its in-memory EMR, which keeps its doctors and locations
// to itself (as a vendor EMR does) and lets the adapter create patients. Requests go as an operator, a viewer or
// ADMIN_TOKEN, with any method and body.
import request from 'supertest';
import { createCrosswalkAdminRouter } from '../../src/crosswalk/admin-router.ts';
import { type Crosswalk, crosswalkOverStores } from '../../src/crosswalk/crosswalk.ts';
import { type AuditedAdmin, auditedAdmin, TOKENS } from './audited-admin.ts';

export interface CrosswalkAdmin extends AuditedAdmin {
  crosswalk: Crosswalk;
  /** A request as `who` (no Authorization header when undefined). */
  send(who: keyof typeof TOKENS | undefined, method: 'get' | 'put' | 'post' | 'delete', path: string): request.Test;
  /** PUT /admin/crosswalk/{entityType}/{serviceId} as an operator. */
  map(entityType: string, serviceId: string, emrId: string): request.Test;
}

export function crosswalkAdmin(): CrosswalkAdmin {
  let crosswalk: Crosswalk | undefined;
  const admin = auditedAdmin({
    routers: (f, auditor) => {
      crosswalk = crosswalkOverStores(f.stores, { emr: f.emr, auditor });
      return [createCrosswalkAdminRouter({ crosswalk, store: f.stores.crosswalk })];
    },
  });
  admin.f.emr.creatable.delete('doctor');
  admin.f.emr.creatable.delete('location');
  const send: CrosswalkAdmin['send'] = (who, method, path) =>
    request(admin.app.callback())
      [method](`/admin${path}`)
      .set(who ? { authorization: `Bearer ${TOKENS[who]}` } : {});
  return {
    ...admin,
    crosswalk: crosswalk!,
    send,
    map: (entityType, serviceId, emrId) => send('operator', 'put', `/crosswalk/${entityType}/${encodeURIComponent(serviceId)}`).send({ emrId }),
  };
}
