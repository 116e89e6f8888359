// Claiming a record by the service's id: conditional create where the server declares it, search-then-create
// where it does not (the caller's per-entity lock keeps that to one record).
import type { Bundle, Resource } from '@medplum/fhirtypes';
import type { EmrRecord } from '../port.ts';
import type { CapabilityCheck } from './capabilities.ts';
import type { FhirHttp } from './http.ts';

export interface Claims {
  /** The id of the record carrying the service's id, if there is one. */
  findByServiceId(resourceType: string, serviceId: string): Promise<string | undefined>;
  /** The record carrying the service's id, made from `resource` when there is none. */
  findOrCreate(resource: Resource, serviceId: string): Promise<EmrRecord>;
}

export function createClaims(http: FhirHttp, system: string, capabilities: CapabilityCheck): Claims {
  async function findByServiceId(resourceType: string, serviceId: string): Promise<string | undefined> {
    const query = `${resourceType}?identifier=${encodeURIComponent(`${system}|${serviceId}`)}&_count=1`;
    return (await http.call<Bundle>('GET', query)).body.entry?.[0]?.resource?.id;
  }
  async function findOrCreate(resource: Resource, serviceId: string): Promise<EmrRecord> {
    if ((await capabilities.current()).conditionalCreate(resource.resourceType)) {
      const res = await http.call<{ id: string }>('POST', resource.resourceType, resource, { 'if-none-exist': `identifier=${system}|${serviceId}` });
      return { id: res.body.id, created: res.status === 201 };
    }
    const found = await findByServiceId(resource.resourceType, serviceId);
    if (found) return { id: found, created: false };
    return { id: (await http.call<{ id: string }>('POST', resource.resourceType, resource)).body.id, created: true };
  }
  return { findByServiceId, findOrCreate };
}
