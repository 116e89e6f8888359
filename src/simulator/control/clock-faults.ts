// Control routes for the simulated clock (read it, move it forward) and the faults QA switches on.
import type Router from '@koa/router';
import { toIso } from '../../clock.ts';
import { readControlBody } from '../control-body.ts';
import { faultsSchema } from '../faults.ts';
import type { Simulator } from '../simulator.ts';
import { clockAdvanceBody } from './schemas.ts';

export function clockRoutes(router: Router, sim: Simulator): void {
  const { clock } = sim;
  router.get('/clock', (ctx) => {
    ctx.body = { now: toIso(clock.now()), offsetSeconds: clock.offsetMs() / 1000 };
  });
  router.post('/clock/advance', async (ctx) => {
    const b = await readControlBody(ctx.req, clockAdvanceBody);
    await sim.advance(b.seconds * 1000);
    ctx.body = { now: toIso(clock.now()), offsetSeconds: clock.offsetMs() / 1000 };
  });
}

export function faultRoutes(router: Router, sim: Simulator): void {
  router.get('/faults', (ctx) => {
    ctx.body = sim.getFaults();
  });
  router.post('/faults', async (ctx) => {
    sim.setFaults(await readControlBody(ctx.req, faultsSchema));
    ctx.body = sim.getFaults();
  });
  router.delete('/faults', (ctx) => {
    sim.setFaults({});
    ctx.body = {};
  });
}
