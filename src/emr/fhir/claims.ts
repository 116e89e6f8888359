// Claiming a record by the service's id: conditional create where the server declares it, search-then-create
// where it does not (the caller's per-entity lock keeps that to one record). A record is found only when it
// carries the service's identifier itself (./search.ts), and a create's id is read from its Location when the
// server answers without a body (./created.ts).
import type { Resource } from '@medplum/fhirtypes';
import { EmrError } from '../errors.ts';
import type { EmrRecord } from '../port.ts';
import type { CapabilityCheck } from './capabilities.ts';
import { createdId } from './created.ts';
import type { FhirAnswer, FhirHttp } from './http.ts';
import { findOneByIdentifier } from './search.ts';

export interface Claims {
  /** The id of the one record carrying the service's id, if there is one; two or more are emr_record_conflict. */
  findByServiceId(resourceType: string, serviceId: string): Promise<string | undefined>;
  /** The record carrying the service's id, made from `resource` when there is none. */
  findOrCreate(resource: Resource, serviceId: string): Promise<EmrRecord>;
  /** Creates `resource` (conditionally where the server declares it) and reads its id; the caller searched first. */
  create(resource: Resource, serviceId: string): Promise<EmrRecord>;
}

export function createClaims(http: FhirHttp, system: string, capabilities: CapabilityCheck): Claims {
  async function findByServiceId(resourceType: string, serviceId: string): Promise<string | undefined> {
    return (await findOneByIdentifier(http, resourceType as Resource['resourceType'], system, serviceId))?.id;
  }

  /** The id a create answered with; an answer naming none (no Location, no body) is found by its identifier. */
  async function idOfAnswer(answer: FhirAnswer<unknown>, resourceType: string, serviceId: string): Promise<string> {
    const id = createdId(answer, resourceType) ?? (await findByServiceId(resourceType, serviceId));
    if (id === undefined)
      throw new EmrError(
        'emr_unavailable',
        `the EMR answered ${answer.status} to POST ${resourceType} naming no record, and none carries the service's id yet`,
      );
    return id;
  }

  async function findOrCreate(resource: Resource, serviceId: string): Promise<EmrRecord> {
    const type = resource.resourceType;
    if ((await capabilities.current()).conditionalCreate(type)) {
      const answer = await http.call<unknown>('POST', type, resource, { 'if-none-exist': `identifier=${system}|${serviceId}` });
      return { id: await idOfAnswer(answer, type, serviceId), created: answer.status === 201 };
    }
    const found = await findByServiceId(type, serviceId);
    if (found) return { id: found, created: false };
    return { id: await idOfAnswer(await http.call<unknown>('POST', type, resource), type, serviceId), created: true };
  }

  async function create(resource: Resource, serviceId: string): Promise<EmrRecord> {
    const type = resource.resourceType;
    const conditional = (await capabilities.current()).conditionalCreate(type);
    const answer = await http.call<unknown>('POST', type, resource, conditional ? { 'if-none-exist': `identifier=${system}|${serviceId}` } : {});
    return { id: await idOfAnswer(answer, type, serviceId), created: answer.status === 201 };
  }
  return { findByServiceId, findOrCreate, create };
}
