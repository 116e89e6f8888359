// `fhir-server --profile vendor`: the bundled FHIR server as an EMR that owns its records. Loads the master data
// into the store and makes the Schedules' Slots, then answers in front of the store: the profile's refusals
// (./rules.ts), the Slot search (./slot-search.ts), booking (./appointments.ts) and changes under If-Match
// (./changes.ts), an ETag on every answer that carries one record, and the control routes (./control.ts).
import type { IncomingHttpHeaders } from 'node:http';
import type { Clock } from '../../clock.ts';
import type { Logger } from '../../logger.ts';
import type { FhirAnswer, FhirHandler, FhirRequest } from '../fhir-handler.ts';
import { Refused, withEtag } from './answers.ts';
import { bookAppointment } from './appointments.ts';
import { vendorCapabilityStatement } from './capability.ts';
import { patchRecord } from './changes.ts';
import { controlRoute } from './control.ts';
import { createRequestCounters, type CountersSnapshot } from './counters.ts';
import { loadMasterData, readMasterData } from './master-data.ts';
import { createRecords, type Records } from './records.ts';
import { refusalOf, type WriteRequest, writeRequest } from './rules.ts';
import { createSlotBook, type SlotBook } from './slot-book.ts';
import { isSlotSearch, searchSlots } from './slot-search.ts';

export interface VendorProfile {
  /** The store behind the profile's refusals and rules. */
  fhir: FhirHandler;
  capability(opts: { tokenUrl?: string }): object;
  /** Counts a FHIR request as it arrives, before sign-in is checked. */
  observe(method: string, url: string, headers: IncomingHttpHeaders): void;
  counters(): CountersSnapshot;
  /** A request to /_control/…; `body` is the JSON read for a POST or a PUT. */
  control(method: string, path: string, body: unknown): Promise<FhirAnswer>;
}

export interface VendorProfileOptions {
  store: FhirHandler;
  masterDataFile: string;
  logger: Logger;
  /** What "today" is for the Slots made ahead. */
  clock: Clock;
}

/** `/Appointment/12?x` → ['Appointment', '12']. */
const pathOf = (url: string): string[] => (url.split('?')[0] ?? '').split('/').filter(Boolean);

/** The profile's own answer to a request its refusals let through, or the store's. */
function answer(deps: { store: FhirHandler; records: Records; book: SlotBook }, req: FhirRequest, write: WriteRequest | undefined): Promise<FhirAnswer> {
  const [type, id] = pathOf(req.url);
  if (!write) return isSlotSearch(req.method, req.url) ? searchSlots(deps, req.url, req.headers) : deps.store(req);
  if (write.interaction === 'create' && write.type === 'Appointment')
    return deps.records.serially(async () => (await bookAppointment(deps.records, req.body)) ?? deps.store(req));
  if (write.interaction === 'patch' && write.level === 'instance') return deps.records.serially(() => patchRecord(deps.records, req, type!, id!));
  return deps.store(req);
}

export async function createVendorProfile(opts: VendorProfileOptions): Promise<VendorProfile> {
  const written = await loadMasterData(opts.store, readMasterData(opts.masterDataFile), opts.masterDataFile);
  // The book writes its Slots through the records, and follows every Slot and Schedule written through them.
  const records = createRecords(opts.store, (type, id, record) => book.observe(type, id, record));
  const book = createSlotBook({ records, logger: opts.logger });
  await book.load(opts.clock.now());
  opts.logger.info({ written }, 'vendor profile: master data loaded');
  const counters = createRequestCounters();
  const deps = { store: opts.store, records, book };

  const fhir: FhirHandler = async (req) => {
    const write = writeRequest(req.method, req.url, req.headers);
    const refusal = write && refusalOf(write);
    if (refusal) {
      counters.refused(req.method, write.type);
      return refusal;
    }
    try {
      const now = opts.clock.now();
      if (book.stale(now)) await records.serially(() => book.roll(now));
      return withEtag(await answer(deps, req, write));
    } catch (err) {
      if (!(err instanceof Refused)) throw err;
      if (!err.byStore) counters.refused(req.method, write?.type ?? pathOf(req.url)[0] ?? '');
      return err.answer;
    }
  };
  return {
    fhir,
    capability: vendorCapabilityStatement,
    observe: (method, url, headers) =>
      counters.asked(method, url, { ifNoneExist: headers['if-none-exist'] !== undefined, ifMatch: headers['if-match'] !== undefined }),
    counters: counters.snapshot,
    control: (method, path, body) => controlRoute({ records, counters: counters.snapshot }, method, path, body),
  };
}
