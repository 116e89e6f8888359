// GET /admin/mappings (the viewer role): a mapping looked up by the service's id or by the EMR's, the other
// side shown with whether the service has it yet. The EMR side takes a reference as the EMR module names its
// records (FHIR: `Patient/12`, that type only) or a bare id (any type). Identifiers only.
import Router from '@koa/router';
import { z } from 'zod';
import { ValidationError } from '../errors.ts';
import { toValidationError } from '../http/list-query.ts';
import type { MappingLookup, MappingRecord } from '../storage/mappings.ts';
import type { RecordRefs } from '../emr/refs.ts';

/** GET /admin/mappings: exactly one of these. */
export const mappingLookupParams = {
  serviceId: z.string().min(1).max(200).optional(),
  emrId: z.string().min(1).max(300).optional(),
};

export const mappingView = (m: MappingRecord, refs: RecordRefs) => ({ ...m, emrRef: refs.describe(m.entityType, m.emrId) });

export function createMappingsAdminRouter(deps: { lookup: MappingLookup; refs: RecordRefs }): Router {
  const router = new Router();
  router.get('/mappings', async (ctx) => {
    const r = z.strictObject(mappingLookupParams).safeParse(ctx.query);
    if (!r.success) throw toValidationError(r.error.issues[0]!);
    const { serviceId, emrId } = r.data;
    if ((serviceId === undefined) === (emrId === undefined)) throw new ValidationError('serviceId: give serviceId or emrId, one of the two', 'serviceId');
    let found: MappingRecord[];
    if (serviceId !== undefined) found = await deps.lookup.byServiceId(serviceId);
    else {
      const ref = deps.refs.parse(emrId!);
      found = await deps.lookup.byEmrId(ref.emrId, ref.entityType);
    }
    ctx.body = { mappings: found.map((m) => mappingView(m, deps.refs)) };
  });
  return router;
}
