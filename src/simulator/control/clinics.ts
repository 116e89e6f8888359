// Control routes for clinics and their integration API keys.
import { randomBytes } from 'node:crypto';
import type Router from '@koa/router';
import { ValidationError } from '../../errors.ts';
import { readControlBody } from '../control-body.ts';
import { newServiceId } from '../documents.ts';
import type { Simulator } from '../simulator.ts';
import type { Clinic, Store } from '../store.ts';
import { clinicSchema, keyBody } from './schemas.ts';

/** The clinic a body names; an unknown one is the body's fault (400 on clinicId). */
export function clinicOf(store: Store, clinicId: string): Clinic {
  const c = store.get('clinic', clinicId);
  if (!c) throw new ValidationError('clinicId: unknown clinic', 'clinicId');
  return c;
}

export function clinicRoutes(router: Router, { store }: Simulator): void {
  router.post('/clinics', async (ctx) => {
    const c = await readControlBody(ctx.req, clinicSchema);
    const clinic: Clinic = { id: newServiceId('clinic'), ...c };
    store.put('clinic', clinic);
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
