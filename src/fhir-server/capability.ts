// The CapabilityStatement served at `GET /metadata`: the resource types the adapter uses, what may be done
// with them, whether a Bundle of them may be posted to the base (transaction, batch), and, with sign-in on,
// where SMART Backend Services get their tokens.
import type { CapabilityStatement, CapabilityStatementRestSecurity } from '@medplum/fhirtypes';

export const ADAPTER_RESOURCE_TYPES = ['Patient', 'Practitioner', 'Location', 'Appointment', 'DocumentReference', 'Binary', 'Communication'] as const;

export interface CapabilityOptions {
  conditionalCreate: boolean;
  /** Whether the base takes a Bundle of type transaction or batch (declared as the system interactions). */
  transactions: boolean;
  /** Present when sign-in is on. */
  tokenUrl?: string;
}

/** How a client signs in, as the CapabilityStatement says it (also the vendor profile's: ./vendor/capability.ts). */
export function smartSecurity(tokenUrl: string): CapabilityStatementRestSecurity {
  return {
    service: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/restful-security-service', code: 'SMART-on-FHIR' }] }],
    extension: [
      {
        url: 'http://fhir-registry.smarthealthit.org/StructureDefinition/oauth-uris',
        extension: [{ url: 'token', valueUri: tokenUrl }],
      },
    ],
  };
}

export function capabilityStatement(opts: CapabilityOptions): CapabilityStatement {
  return {
    resourceType: 'CapabilityStatement',
    status: 'active',
    kind: 'instance',
    fhirVersion: '4.0.1',
    format: ['json'],
    date: '2026-01-01',
    rest: [
      {
        mode: 'server',
        resource: ADAPTER_RESOURCE_TYPES.map((type) => ({
          type,
          interaction: [{ code: 'read' }, { code: 'search-type' }, { code: 'create' }, { code: 'update' }],
          conditionalCreate: opts.conditionalCreate,
          conditionalUpdate: true,
        })),
        ...(opts.transactions ? { interaction: [{ code: 'transaction' as const }, { code: 'batch' as const }] } : {}),
        ...(opts.tokenUrl ? { security: smartSecurity(opts.tokenUrl) } : {}),
      },
    ],
  };
}
