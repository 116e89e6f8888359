// The FHIR adapter as benchmarks and tests build it beside a bundled FHIR server: no sign-in, the service's
// identifier system, the usual LOINC document types, a quiet logger; each caller changes only what it measures.
import { systemClock } from '../../src/clock.ts';
import { createFhirEmr, type FhirEmr, type FhirEmrOptions } from '../../src/emr/fhir/index.ts';
import { silentLogger } from '../../src/logger.ts';

export function plainFhirEmr(baseUrl: string, overrides: Partial<FhirEmrOptions> = {}): FhirEmr {
  return createFhirEmr({
    baseUrl,
    identifierSystem: 'urn:emr-bridge:service',
    timeoutMs: 10_000,
    labReportTypeCodes: ['http://loinc.org|11502-2'],
    prescriptionTypeCodes: ['http://loinc.org|57833-6'],
    auth: { mode: 'none' },
    maxContentBytes: 1024 * 1024,
    clock: systemClock,
    logger: silentLogger(),
    ...overrides,
  });
}
