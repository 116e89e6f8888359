// The EMR modules emr-bridge can run with, by EMR_PROTOCOL. The runtime imports only this file of src/emr/
// (besides the port's types): a new EMR is a folder of its own under src/emr/ with its settings entry in
// ./settings.ts and one line here (docs/forking.md, "Adding an EMR").
import { fhirModule } from './fhir/module.ts';
import { hl7v2Module } from './hl7v2/module.ts';
import type { EmrModule } from './module.ts';
import type { EmrConfig, EmrProtocol } from './settings.ts';

export const EMR_MODULES: { [P in EmrProtocol]: EmrModule<P> } = {
  fhir: fhirModule,
  hl7v2: hl7v2Module,
};

/** The module EMR_PROTOCOL chose, with its settings. */
export function emrModuleFor(emr: EmrConfig): EmrModule {
  return EMR_MODULES[emr.protocol] as EmrModule;
}

export type { BundledEmr, EmrHostContext, EmrModule, EmrSummary, RunningEmr } from './module.ts';
export type { EmrDocument, EmrInbound, EmrPort, EmrRecord, IdentifiedRecord } from './port.ts';
export { LOCAL_PORT_METHODS } from './port.ts';
export type { RecordRefs } from './refs.ts';
export { EmrError } from './errors.ts';
