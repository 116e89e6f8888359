// Control routes for clinics and their integration API keys. A clinic may come with a roster: its doctors and
// locations under the service ids given (a demo's fixed ones, those an EMR's crosswalk names), made with it.
import { randomBytes } from 'node:crypto';
import type Router from '@koa/router';
import { ValidationError } from '../../errors.ts';
import { readControlBody } from '../control-body.ts';
import { newServiceId } from '../documents.ts';
import type { Simulator } from '../simulator.ts';
import type { Clinic, RosterEntry, Store } from '../store.ts';
import { clinicSchema, keyBody } from './schemas.ts';

/** The clinic a body names; an unknown one is the body's fault (400 on clinicId). */
export function clinicOf(store: Store, clinicId: string): Clinic {
  const c = store.get('clinic', clinicId);
  if (!c) throw new ValidationError('clinicId: unknown clinic', 'clinicId');
  return c;
}

/** A roster's service ids are the clinic's own: one another clinic holds (or one listed twice) is the body's fault. */
function checkRoster(store: Store, roster: NonNullable<Clinic['roster']>): void {
  for (const kind of ['doctor', 'location'] as const) {
    const entries = roster[`${kind}s`];
    const seen = new Set<string>();
    entries.forEach((e, i) => {
      const field = `roster.${kind}s.${i}.serviceId`;
      if (seen.has(e.serviceId)) throw new ValidationError(`${field}: ${e.serviceId} is listed twice`, field);
      if (store.get(kind, e.serviceId)) throw new ValidationError(`${field}: ${e.serviceId} is already a ${kind} of a clinic`, field);
      seen.add(e.serviceId);
    });
  }
}

function putRoster(store: Store, clinicId: string, kind: 'doctor' | 'location', entries: RosterEntry[]): void {
  for (const e of entries) store.put(kind, { id: e.serviceId, clinicId, externalId: null, name: e.name });
}

export function clinicRoutes(router: Router, { store }: Simulator): void {
  router.post('/clinics', async (ctx) => {
    const c = await readControlBody(ctx.req, clinicSchema);
    if (c.roster) checkRoster(store, c.roster);
    const clinic: Clinic = { id: newServiceId('clinic'), ...c };
    store.put('clinic', clinic);
    if (c.roster) {
      putRoster(store, clinic.id, 'doctor', c.roster.doctors);
      putRoster(store, clinic.id, 'location', c.roster.locations);
    }
    ctx.status = 201;
    ctx.body = { clinicId: clinic.id, ...c };
  });
  router.post('/keys', async (ctx) => {
    const b = await readControlBody(ctx.req, keyBody);
    clinicOf(store, b.clinicId);
    const key = `${b.mode}_${randomBytes(16).toString('hex')}`;
    store.put('key', { id: key, clinicId: b.clinicId, mode: b.mode });
    ctx.status = 201;
    ctx.body = { key, mode: b.mode };
  });
}
