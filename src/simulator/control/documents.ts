// Control route for a clinic person's release of a HELD document (quiet hours still apply).
import type Router from '@koa/router';
import { noFields, readControlBody } from '../control-body.ts';
import type { Simulator } from '../simulator.ts';

export function documentRoutes(router: Router, sim: Simulator): void {
  router.post('/documents/:serviceId/release', async (ctx) => {
    await readControlBody(ctx.req, noFields);
    const d = await sim.documents.release(ctx.params.serviceId!);
    await sim.runDue();
    ctx.body = { serviceId: d.id, externalId: d.externalId, status: d.status, statusReason: d.statusReason, releaseAfter: d.releaseAfter, sentAt: d.sentAt };
  });
}
