// `fhir-server --profile vendor`: the bundled FHIR server as an EMR that owns its records. Loads the master data
// into the store, then puts the profile's refusals in front of it and counts what it is asked.
import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from '../../logger.ts';
import type { FhirHandler } from '../fhir-handler.ts';
import { vendorCapabilityStatement } from './capability.ts';
import { createRequestCounters, type CountersSnapshot } from './counters.ts';
import { loadMasterData, readMasterData } from './master-data.ts';
import { refusalOf, writeRequest } from './rules.ts';

export interface VendorProfile {
  /** The store behind the profile's refusals. */
  fhir: FhirHandler;
  capability(opts: { tokenUrl?: string }): object;
  /** Counts a FHIR request as it arrives, before sign-in is checked. */
  observe(method: string, url: string, headers: IncomingHttpHeaders): void;
  counters(): CountersSnapshot;
}

export async function createVendorProfile(opts: { store: FhirHandler; masterDataFile: string; logger: Logger }): Promise<VendorProfile> {
  const written = await loadMasterData(opts.store, readMasterData(opts.masterDataFile), opts.masterDataFile);
  opts.logger.info({ written }, 'vendor profile: master data loaded');
  const counters = createRequestCounters();
  const fhir: FhirHandler = async (req) => {
    const write = writeRequest(req.method, req.url, req.headers);
    const refusal = write && refusalOf(write);
    if (!refusal) return opts.store(req);
    counters.refused(req.method, write.type);
    return refusal;
  };
  return {
    fhir,
    capability: vendorCapabilityStatement,
    observe: (method, url, headers) => counters.asked(method, url, headers['if-none-exist'] !== undefined),
    counters: counters.snapshot,
  };
}
