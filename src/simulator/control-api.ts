// The simulator's control API (/_sim/, docs/simulator.md): what tests, QA and the demo use to play the
// service's other side — clinics, keys, subscriptions, appointments and patients "from any channel",
// a clinic person's release, the clock, faults, and what happened (deliveries, messages, alerts).
// Each area's routes are in ./control/; their bodies in ./control/schemas.ts.
import Router from '@koa/router';
import type { Db } from '../sqlite/open.ts';
import { appointmentRoutes, patientRoutes } from './control/appointments.ts';
import { clinicRoutes } from './control/clinics.ts';
import { clockRoutes, faultRoutes } from './control/clock-faults.ts';
import { documentRoutes } from './control/documents.ts';
import { inspectionRoutes } from './control/inspection.ts';
import { subscriptionRoutes } from './control/subscriptions.ts';
import type { Simulator } from './simulator.ts';

export function createControlRouter(sim: Simulator, db: Db): Router {
  const router = new Router({ prefix: '/_sim' });
  clinicRoutes(router, sim);
  subscriptionRoutes(router, sim);
  patientRoutes(router, sim);
  appointmentRoutes(router, sim);
  documentRoutes(router, sim);
  clockRoutes(router, sim);
  inspectionRoutes(router, db);
  faultRoutes(router, sim);
  return router;
}
