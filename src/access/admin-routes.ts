// What each admin route needs and what the audit trail records of it, in one table: reads need `viewer` and
// are not recorded; anything that changes state, or shows a stored body, needs `operator` and is recorded
// under a stable action name with the ids it acts on (from the path and the request's JSON body; never a
// name, phone, label, reason text or body). A route missing here still gets the safe default (GET: viewer,
// anything else: operator, recorded as `undeclared`), and test/access/route-coverage.test.ts fails until it
// is added: a new route, a body reveal above all, must be declared here.
import type { Role } from '../actor.ts';

export interface RouteInput {
  /** The route's path parameters, decoded. */
  params: Record<string, string | undefined>;
  /** The JSON body the route read (src/http/json-body.ts), if it read one. */
  body: unknown;
}

export interface AdminRouteRule {
  needs: Role;
  /** The audit trail's name for the action; absent: a read, not recorded. */
  action?: string;
  /** The ids acted on (eventIds, externalIds, `entityType:serviceId`, `eventType:<type>`). */
  targets?: (r: RouteInput) => (string | undefined)[];
}

const read: AdminRouteRule = { needs: 'viewer' };
const operator = (action: string, targets?: AdminRouteRule['targets']): AdminRouteRule => ({ needs: 'operator', action, ...(targets ? { targets } : {}) });

/** A string field of a JSON object body, or undefined. */
const field = (body: unknown, name: string): string | undefined => {
  const v = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>)[name] : undefined;
  return typeof v === 'string' ? v : undefined;
};
const param = (name: string) => (r: RouteInput) => [r.params[name]];

/** Keyed `METHOD path` as the admin router registers it (`:name` parameters, the /admin prefix included). */
export const ADMIN_ROUTE_RULES: Readonly<Record<string, AdminRouteRule>> = {
  'GET /admin/status': read,
  'GET /admin/audit': read,
  'GET /admin/dead-letters': read,
  'GET /admin/events': read,
  'GET /admin/events/:eventId': read,
  'GET /admin/mappings': read,
  'GET /admin/stats/minutes': read,
  'POST /admin/dead-letters/replay': operator('dead_letter.replay_all', (r) => {
    const type = field(r.body, 'eventType');
    return [type && `eventType:${type}`];
  }),
  'POST /admin/dead-letters/:eventId/replay': operator('dead_letter.replay', param('eventId')),
  'POST /admin/dead-letters/:eventId/dismiss': operator('dead_letter.dismiss', param('eventId')),
  'POST /admin/dead-letters/mappings/:entityType/:serviceId/replay': operator('mapping.replay', (r) => [`${r.params.entityType}:${r.params.serviceId}`]),
  'POST /admin/dead-letters/mappings/:entityType/:serviceId/dismiss': operator('mapping.dismiss', (r) => [`${r.params.entityType}:${r.params.serviceId}`]),
  'GET /admin/documents': read,
  'GET /admin/documents/:externalId': read,
  'POST /admin/documents': operator('document.push', (r) => [field(r.body, 'externalId')]),
  'POST /admin/documents/:externalId/retry': operator('document.retry', param('externalId')),
  'GET /admin/emr/downtime': read,
  // The time only: the reason is an operator's free text, kept out of the audit trail.
  'POST /admin/emr/downtime': operator('emr_downtime.start', (r) => {
    const until = field(r.body, 'until');
    return [until && `until:${until}`];
  }),
  'DELETE /admin/emr/downtime': operator('emr_downtime.end'),
  'GET /admin/crosswalk': read,
  'GET /admin/crosswalk/export': read,
  'GET /admin/crosswalk/:entityType/:serviceId/suggestions': read,
  // PUT and DELETE: the crosswalk module records the change itself once the route reaches it (src/crosswalk/
  // admin-router.ts); the entry named here is for a request it never saw (403, 400). An import is recorded here,
  // and each of its lines by the module.
  'PUT /admin/crosswalk/:entityType/:serviceId': operator('crosswalk.map', (r) => [`${r.params.entityType}:${r.params.serviceId}`]),
  'DELETE /admin/crosswalk/:entityType/:serviceId': operator('crosswalk.unmap', (r) => [`${r.params.entityType}:${r.params.serviceId}`]),
  'POST /admin/crosswalk/import': operator('crosswalk.import'),
  'GET /admin/quarantine': read,
  'POST /admin/quarantine/:eventId/apply': operator('quarantine.apply', param('eventId')),
  'POST /admin/quarantine/:eventId/dismiss': operator('quarantine.dismiss', param('eventId')),
};

/** The action of a state-changing request to a route that is not in the table. */
export const UNDECLARED_ACTION = 'undeclared';

const isRead = (method: string) => method === 'GET' || method === 'HEAD';

/** The rule for a request: the table's, else the safe default for its method. */
export function ruleFor(method: string, routePath: string | undefined, rules: Readonly<Record<string, AdminRouteRule>> = ADMIN_ROUTE_RULES): AdminRouteRule {
  const declared = routePath === undefined ? undefined : rules[`${isRead(method) ? 'GET' : method} ${routePath}`];
  if (declared) return declared;
  return isRead(method) ? read : { needs: 'operator', action: UNDECLARED_ACTION };
}
