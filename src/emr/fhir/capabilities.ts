// What the EMR says it can do, read once from GET {FHIR_BASE_URL}/metadata. A server that answers and is
// not FHIR R4 is refused; a resource type it does not declare conditional create for is claimed by
// search-then-create instead (safe under the processor's per-entity lock, so still one record each). A server
// that also declares the transaction interaction takes an appointment and the records it names in one Bundle
// (./transaction.ts).
import type { CapabilityStatement } from '@medplum/fhirtypes';
import type { Logger } from '../../logger.ts';
import { EmrError } from '../errors.ts';
import type { FhirHttp } from './http.ts';

/** The resource types the adapter creates by the service's identifier. */
export const CLAIMED_TYPES = ['Patient', 'Practitioner', 'Location', 'Appointment'] as const;

export interface FhirCapabilities {
  fhirVersion: string;
  /** True when the server declares conditional create (If-None-Exist) for the type. */
  conditionalCreate(resourceType: string): boolean;
  /** True when the server declares the create interaction for the type. */
  creates(resourceType: string): boolean;
  /**
   * How a change to a record of the type is sent: `update` (PUT) where the server declares it, else `patch` (JSON
   * Patch) where it declares that; `update` when it declares neither (the write is tried, and a refusal is an incident).
   */
  changeBy(resourceType: string): 'update' | 'patch';
  /** True when the server declares the transaction interaction and conditional create for every claimed type. */
  transactions(): boolean;
}

/** Checks a CapabilityStatement; throws emr_incompatible for anything but FHIR R4 (4.0.x). */
export function readCapabilities(statement: unknown): FhirCapabilities {
  const s = statement as Partial<CapabilityStatement> | undefined;
  if (s?.resourceType !== 'CapabilityStatement')
    throw new EmrError('emr_incompatible', 'FHIR_BASE_URL/metadata is not a FHIR CapabilityStatement: is FHIR_BASE_URL the FHIR base address?');
  const version = s.fhirVersion ?? '';
  if (!/^4\.0(\.\d+)?$/.test(version))
    throw new EmrError('emr_incompatible', `the EMR speaks FHIR ${version || '(no version given)'}, emr-bridge needs FHIR R4 (4.0.x)`);
  const servers = (s.rest ?? []).filter((r) => r.mode === 'server');
  const resources = servers.flatMap((r) => r.resource ?? []);
  const conditional = new Set<string>(resources.filter((r) => r.conditionalCreate === true).map((r): string => r.type));
  const declaring = (code: string) => new Set<string>(resources.filter((r) => (r.interaction ?? []).some((i) => i.code === code)).map((r): string => r.type));
  const creatable = declaring('create');
  const updatable = declaring('update');
  const patchable = declaring('patch');
  const transaction = servers.some((r) => (r.interaction ?? []).some((i) => i.code === 'transaction'));
  const transactions = transaction && CLAIMED_TYPES.every((t) => conditional.has(t));
  return {
    fhirVersion: version,
    conditionalCreate: (type) => conditional.has(type),
    creates: (type) => creatable.has(type),
    changeBy: (type) => (!updatable.has(type) && patchable.has(type) ? 'patch' : 'update'),
    transactions: () => transactions,
  };
}

export interface CapabilityCheck {
  /** Asks /metadata now and checks it (start-up, readiness). */
  check(): Promise<FhirCapabilities>;
  /** What the last successful check found; asks first when nothing was found yet. */
  current(): Promise<FhirCapabilities>;
}

/** /metadata is asked without sign-in first (it is public on most servers), and with it when the server wants that. */
export function createCapabilityCheck(http: FhirHttp, logger: Logger): CapabilityCheck {
  let known: FhirCapabilities | undefined;
  async function fetchStatement(): Promise<unknown> {
    try {
      return (await http.call('GET', 'metadata', undefined, {}, { signIn: false })).body;
    } catch (err) {
      if (err instanceof EmrError && err.code === 'emr_unauthorized') return (await http.call('GET', 'metadata')).body;
      // A server that answers /metadata with 404 (or another refusal) is not a FHIR server at that address.
      if (err instanceof EmrError && err.code === 'emr_rejected')
        throw new EmrError(
          'emr_incompatible',
          `FHIR_BASE_URL/metadata answered ${err.httpStatus ?? 'a refusal'}: is FHIR_BASE_URL the FHIR base address?`,
          err.httpStatus,
        );
      throw err;
    }
  }
  async function check(): Promise<FhirCapabilities> {
    const capabilities = readCapabilities(await fetchStatement());
    if (!known) {
      const missing = CLAIMED_TYPES.filter((t) => !capabilities.conditionalCreate(t));
      if (missing.length)
        logger.warn({ resourceTypes: missing }, 'the EMR does not declare conditional create for these types: claiming them by search, then create');
    }
    known = capabilities;
    return known;
  }
  return { check, current: async () => known ?? check() };
}
