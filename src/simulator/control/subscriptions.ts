// Control routes for webhook subscriptions: subscribing, reading one's state, resuming a paused one, and
// rotating and retiring its signing secrets.
import { randomBytes } from 'node:crypto';
import type Router from '@koa/router';
import { NotFoundError } from '../../errors.ts';
import { noFields, readControlBody } from '../control-body.ts';
import { newServiceId } from '../documents.ts';
import type { Simulator } from '../simulator.ts';
import type { Store, Subscription } from '../store.ts';
import { clinicOf } from './clinics.ts';
import { subscriptionBody } from './schemas.ts';

const newSecret = () => `whsec_${randomBytes(24).toString('base64url')}`;

function subscriptionOf(store: Store, id: string): Subscription {
  const s = store.get('subscription', id);
  if (!s) throw new NotFoundError('no such subscription');
  return s;
}

function subscriptionState(sim: Simulator, id: string) {
  const s = subscriptionOf(sim.store, id);
  return {
    id: s.id,
    clinicId: s.clinicId,
    url: s.url,
    eventTypes: s.eventTypes,
    keyId: s.keyId,
    paused: s.paused,
    consecutiveFailures: s.consecutiveFailures,
    queued: sim.dispatcher.queued(s.id),
    activeSecrets: s.secrets.length,
  };
}

export function subscriptionRoutes(router: Router, sim: Simulator): void {
  const { store } = sim;
  router.post('/subscriptions', async (ctx) => {
    const b = await readControlBody(ctx.req, subscriptionBody);
    clinicOf(store, b.clinicId);
    const sub: Subscription = {
      id: newServiceId('sub'),
      clinicId: b.clinicId,
      url: b.url,
      eventTypes: b.eventTypes,
      keyId: `key_${randomBytes(8).toString('hex')}`,
      secrets: [newSecret()],
      paused: false,
      consecutiveFailures: 0,
    };
    store.put('subscription', sub);
    ctx.status = 201;
    ctx.body = { id: sub.id, keyId: sub.keyId, signingSecret: sub.secrets[0] };
  });
  router.get('/subscriptions/:id', (ctx) => {
    ctx.body = subscriptionState(sim, ctx.params.id!);
  });
  router.post('/subscriptions/:id/resume', async (ctx) => {
    await readControlBody(ctx.req, noFields);
    const s = subscriptionOf(store, ctx.params.id!);
    sim.resume(s.id);
    ctx.body = subscriptionState(sim, s.id);
  });
  router.post('/subscriptions/:id/rotate-secret', async (ctx) => {
    await readControlBody(ctx.req, noFields);
    const s = subscriptionOf(store, ctx.params.id!);
    const secret = newSecret();
    store.put('subscription', { ...s, secrets: [secret, ...s.secrets] });
    sim.secretsChanged(s.id, [secret, ...s.secrets]);
    ctx.body = { signingSecret: secret, activeSecrets: s.secrets.length + 1 };
  });
  router.post('/subscriptions/:id/retire-secrets', async (ctx) => {
    await readControlBody(ctx.req, noFields);
    const s = subscriptionOf(store, ctx.params.id!);
    store.put('subscription', { ...s, secrets: s.secrets.slice(0, 1) });
    sim.secretsChanged(s.id, s.secrets.slice(0, 1));
    ctx.body = { activeSecrets: 1 };
  });
}
