// The vendor profile's CapabilityStatement, made from the same rules its refusals enforce (./rules.ts): per
// type its interactions, no conditional create anywhere, JSON Patch as the patch format, no transaction or batch
// interaction; and the search parameters an outside writer needs to find the EMR's own records by name.
import type { CapabilityStatement, CapabilityStatementRestResource } from '@medplum/fhirtypes';
import { smartSecurity } from '../capability.ts';
import { VENDOR_RULES } from './rules.ts';

type SearchParam = NonNullable<CapabilityStatementRestResource['searchParam']>[number];
type ParamType = SearchParam['type'];

const param = (name: string, type: ParamType): SearchParam => ({ name, type });
const byId = [param('_id', 'token'), param('identifier', 'token')];

// Declared, not enforced: every search Medplum answers still works. These are the ones documented for callers.
const SEARCH_PARAMS: Record<string, SearchParam[]> = {
  Patient: [...byId, param('name', 'string'), param('phone', 'token'), param('birthdate', 'date')],
  Practitioner: [...byId, param('name', 'string')],
  Location: [...byId, param('name', 'string')],
  Appointment: [...byId, param('patient', 'reference'), param('slot', 'reference'), param('practitioner', 'reference'), param('date', 'date')],
  Slot: [
    param('_id', 'token'),
    { ...param('schedule', 'reference'), documentation: 'also chained: schedule.actor=Practitioner/{id}' },
    { ...param('start', 'date'), documentation: 'eq (the default), ge, gt, le, lt; an instant with its offset, or a date (the clinic day)' },
    param('status', 'token'),
  ],
  Schedule: [param('_id', 'token'), param('actor', 'reference')],
  DocumentReference: [...byId, param('patient', 'reference'), param('type', 'token'), param('_lastUpdated', 'date')],
  Communication: byId,
};

function resource(type: string): CapabilityStatementRestResource {
  const rules = VENDOR_RULES[type]!;
  return {
    type: type as CapabilityStatementRestResource['type'],
    interaction: rules.interactions.map((code) => ({ code })),
    conditionalCreate: false,
    conditionalUpdate: rules.conditionalUpdate,
    ...(SEARCH_PARAMS[type] ? { searchParam: SEARCH_PARAMS[type] } : {}),
  };
}

export function vendorCapabilityStatement(opts: { tokenUrl?: string }): CapabilityStatement {
  return {
    resourceType: 'CapabilityStatement',
    status: 'active',
    kind: 'instance',
    name: 'EmrBridgeVendorProfile',
    description: "emr-bridge's bundled FHIR server as an EMR that owns its records (modelled on Oracle Health Millennium's R4 API)",
    fhirVersion: '4.0.1',
    format: ['json'],
    patchFormat: ['application/json-patch+json'],
    date: '2026-01-01',
    rest: [
      {
        mode: 'server',
        resource: Object.keys(VENDOR_RULES).map(resource),
        ...(opts.tokenUrl ? { security: smartSecurity(opts.tokenUrl) } : {}),
      },
    ],
  };
}
