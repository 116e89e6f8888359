// `emr-bridge replay` beside the vendor demo (`FHIR_SERVER_PROFILE=vendor npm start`: bundled.json notes the FHIR
// server's profile), whose adapter books appointments into the EMR's Slots: what src/replay/slot-plan.ts needs of
// it. The demo's roster (samples/crosswalk.csv, the records the samples name) is mapped through the adapter's
// crosswalk import under the ids the replay sends; the free Slots are read from the FHIR server signed in with the
// adapter's key, as fhir-get reads it.
import { readFileSync } from 'node:fs';
import type { Bundle, Schedule, Slot } from '@medplum/fhirtypes';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { readCsvMappings } from '../crosswalk/csv.ts';
import { loadFhirAuthSettings } from '../emr/fhir/auth/index.ts';
import { createFhirHttp, type FhirHttp } from '../emr/fhir/http.ts';
import { SLOT_BOOKING_SCOPE, type FhirAuthConfig } from '../emr/fhir/settings.ts';
import { TIMEZONE_EXTENSION } from '../fhir-server/vendor/clinic-hours.ts';
import type { FreeSlot, RosterMapping, SlotTarget } from '../replay/slot-plan.ts';
import { readBundledState } from '../runtime/bundled-state.ts';
import { DEMO_CROSSWALK_FILE } from '../runtime/demo-clinic.ts';
import type { AdminClient } from './admin-client.ts';

/** The replay's appointments start an hour from now at the earliest: none is in the past by the time it is applied. */
const LEAD_MS = 3600_000;

export interface ClosableSlotTarget extends SlotTarget {
  close(): Promise<void>;
}

/** Whether the adapter the CLI's defaults name is the vendor demo's (its bundled FHIR server in the vendor profile). */
export function besideVendorDemo(config: Config): boolean {
  return config.bundled.emr && config.emr.protocol === 'fhir' && readBundledState(config.dataDir).emrProfile === 'vendor';
}

/** The adapter's sign-in, with the Slot search and the Schedule's read beside the default scopes. */
export function withSlotScopes(auth: FhirAuthConfig): FhirAuthConfig {
  return auth.mode === 'smart' && !auth.scopes ? { ...auth, addedScopes: [SLOT_BOOKING_SCOPE, 'system/Schedule.r'] } : auth;
}

/** The roster the samples name: EMR ids by `doctor:serviceId`, `location:serviceId`. */
function rosterOf(file: string): Map<string, string> {
  const { mappings } = readCsvMappings(readFileSync(file, 'utf8'));
  return new Map(mappings.filter((m) => m.entityType !== 'patient').map((m) => [`${m.entityType}:${m.serviceId}`, m.emrId]));
}

function mapThrough(admin: AdminClient): SlotTarget['map'] {
  return async (mappings: RosterMapping[]) => {
    const text = ['entityType,serviceId,emrId', ...mappings.map((m) => `${m.entityType},${m.serviceId},${m.emrId}`)].join('\n');
    const res = await admin.text('POST', '/crosswalk/import', { contentType: 'text/csv', text: `${text}\n` });
    const refused = res.status === 200 ? (JSON.parse(res.text) as { refused: { line: number; reason: string }[] }).refused : [];
    if (res.status !== 200 || refused.length)
      throw new Error(`the adapter refused the samples' doctors and locations (${res.status}): ${refused.map((r) => r.reason).join('; ') || res.text}`);
  };
}

function freeSlotsFrom(http: FhirHttp, clock: Clock): SlotTarget['freeSlots'] {
  const zones = new Map<string, string>();
  async function zoneOf(schedule: string | undefined): Promise<string> {
    if (!schedule) return 'UTC';
    if (!zones.has(schedule)) {
      const s = (await http.call<Schedule>('GET', schedule)).body;
      zones.set(schedule, s.extension?.find((e) => e.url === TIMEZONE_EXTENSION)?.valueCode ?? 'UTC');
    }
    return zones.get(schedule)!;
  }
  return async (practitionerId, count): Promise<FreeSlot[]> => {
    const from = new Date(clock.now() + LEAD_MS).toISOString();
    const params = new URLSearchParams({ 'schedule.actor': `Practitioner/${practitionerId}`, status: 'free', start: `ge${from}`, _count: String(count) });
    const bundle = (await http.call<Bundle<Slot>>('GET', `Slot?${params}`)).body;
    const slots = (bundle.entry ?? []).flatMap((e) => (e.resource?.start && e.resource.status === 'free' ? [e.resource] : []));
    return Promise.all(slots.map(async (s) => ({ start: s.start!, timeZone: await zoneOf(s.schedule?.reference) })));
  };
}

/** The slot target of the vendor demo the defaults name: its FHIR server at `fhirBaseUrl`, its admin API through `admin`. */
export async function vendorDemoSlots(config: Config, deps: { admin: AdminClient; fhirBaseUrl: string; clock: Clock }): Promise<ClosableSlotTarget> {
  if (config.emr.protocol !== 'fhir') throw new Error('the vendor demo is a FHIR EMR');
  const fhir = config.emr.settings;
  const http = createFhirHttp({
    baseUrl: deps.fhirBaseUrl,
    timeoutMs: fhir.timeoutMs,
    auth: await loadFhirAuthSettings(withSlotScopes(fhir.auth)),
    clock: deps.clock,
    maxContentBytes: fhir.maxContentBytes,
  });
  return { crosswalk: rosterOf(DEMO_CROSSWALK_FILE), map: mapThrough(deps.admin), freeSlots: freeSlotsFrom(http, deps.clock), close: () => http.close() };
}
