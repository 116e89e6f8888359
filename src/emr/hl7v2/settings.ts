// The HL7 v2 module's settings (HL7_*, docs/connecting-an-hl7-emr.md): their schema, checked with every other setting
// before anything is written, and the rules of an EMR reached over MLLP (TLS in production, loopback
// excepted; the files TLS needs named together). Pure, like config.ts: files are read by the module's prepare().
import { resolve } from 'node:path';
import { z } from 'zod';
import { csv, int } from '../../config-schema.ts';
import type { EmrSettingsContext } from '../settings-context.ts';

/** `mllp://host:port`, `mllps://host:port` (TLS), or `bundled` for the bundled HL7 EMR. */
const mllpUrlOrBundled = z
  .string()
  .trim()
  .transform((s) => (s === '' ? undefined : s.replace(/\/+$/, '')))
  .pipe(
    z
      .union([z.literal('bundled'), z.url({ protocol: /^mllps?$/, error: 'must be mllp://host:port, mllps://host:port or bundled' })])
      .refine((v) => v === 'bundled' || new URL(v).port !== '', 'must name a port (mllp://host:port)')
      .optional(),
  )
  .optional();

/** The records HL7_REQUIRE_MAPPED may name: those an SIU names beside the patient (AIP-3, AIL-3). */
export const REQUIRABLE_TYPES = ['doctor', 'location'] as const;
export type RequirableType = (typeof REQUIRABLE_TYPES)[number];

const PATIENT_EVENTS = { 'A28,A31': ['A28', 'A31'], 'A04,A08': ['A04', 'A08'] } as const;

export const HL7_SETTINGS_SHAPE = {
  HL7_SEND_URL: mllpUrlOrBundled,
  HL7_SEND_CONNECTIONS: int(1, 1, 32),
  HL7_LISTEN_HOST: z.string().min(1).optional(),
  HL7_LISTEN_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  HL7_TLS_CERT_PATH: z.string().optional(),
  HL7_TLS_KEY_PATH: z.string().optional(),
  HL7_TLS_CA_PATH: z.string().optional(),
  HL7_SENDING_APPLICATION: z.string().min(1).default('EMR-BRIDGE'),
  HL7_SENDING_FACILITY: z.string().min(1).default('SERVICE'),
  HL7_RECEIVING_APPLICATION: z.string().min(1).default('EMR'),
  HL7_RECEIVING_FACILITY: z.string().min(1).default('HOSPITAL'),
  HL7_ASSIGNING_AUTHORITY: z.string().min(1).default('SERVICE'),
  HL7_EMR_ASSIGNING_AUTHORITY: z.string().min(1).optional(),
  HL7_ACK_TIMEOUT_MS: int(30_000, 100, 600_000),
  HL7_PATIENT_EVENTS: z
    .string()
    .trim()
    .toUpperCase()
    .transform((s) => s.replace(/\s+/g, ''))
    .pipe(z.enum(Object.keys(PATIENT_EVENTS) as ['A28,A31', 'A04,A08'], { error: 'must be A28,A31 or A04,A08' }))
    .default('A28,A31'),
  HL7_MAX_MESSAGE_BYTES: int(32 * 1024 * 1024, 1024, 256 * 1024 * 1024),
  HL7_LAB_REPORT_TYPES: csv.transform((v) => (v.length ? v : ['LAB'])),
  HL7_PRESCRIPTION_TYPES: csv.transform((v) => (v.length ? v : ['RX'])),
  HL7_REQUIRE_MAPPED: csv.transform((types, ctx) => {
    const unknown = types.filter((t) => !(REQUIRABLE_TYPES as readonly string[]).includes(t));
    if (unknown.length)
      ctx.addIssue({ code: 'custom', message: `must name ${REQUIRABLE_TYPES.join(', ')} (comma-separated), not ${unknown.join(', ').slice(0, 80)}` });
    return [...new Set(types)] as RequirableType[];
  }),
};

const hl7Schema = z.object(HL7_SETTINGS_SHAPE);
type Hl7Raw = z.output<typeof hl7Schema>;

/** The default MLLP port of the adapter's listener (the port IANA lists for HL7 over MLLP). */
export const DEFAULT_HL7_LISTEN_PORT = 2575;

export interface Hl7TlsFiles {
  certPath?: string;
  keyPath?: string;
  caPath?: string;
}

export interface Hl7Settings {
  /** Unset: the bundled HL7 EMR (its address is known once it listens). */
  sendUrl?: string;
  /** How many MLLP links carry messages to the EMR at once (./mllp/link-pool.ts). */
  sendConnections: number;
  listen: { host: string; port: number };
  tls: Hl7TlsFiles;
  header: { sendingApplication: string; sendingFacility: string; receivingApplication: string; receivingFacility: string };
  assigningAuthority: string;
  emrAssigningAuthority?: string;
  ackTimeoutMs: number;
  /** The trigger events for a new and for a changed patient. */
  patientEvents: { created: 'A28' | 'A04'; changed: 'A31' | 'A08' };
  maxMessageBytes: number;
  labReportTypes: string[];
  prescriptionTypes: string[];
  /** HL7_REQUIRE_MAPPED: an appointment's SIU messages wait until these records are mapped in the crosswalk. */
  requireMapped: RequirableType[];
}

/** HL7_* (already checked by the merged schema) to the module's settings; rule breaches go to `problems`. */
export function hl7SettingsFrom(raw: Hl7Raw, ctx: EmrSettingsContext, problems: string[]): Hl7Settings {
  const tls = tlsFiles(raw, problems);
  const listen = {
    host: raw.HL7_LISTEN_HOST ?? ctx.host,
    // A test or a second adapter on this machine (PORT=0) takes a free port for its listener too.
    port: raw.HL7_LISTEN_PORT ?? (ctx.adapterPort === 0 ? 0 : DEFAULT_HL7_LISTEN_PORT),
  };
  if (ctx.production) productionRules(raw, listen.host, tls, ctx, problems);
  const [created, changed] = PATIENT_EVENTS[raw.HL7_PATIENT_EVENTS];
  return {
    ...(raw.HL7_SEND_URL && !ctx.bundled ? { sendUrl: raw.HL7_SEND_URL } : {}),
    sendConnections: raw.HL7_SEND_CONNECTIONS,
    listen,
    tls,
    header: {
      sendingApplication: raw.HL7_SENDING_APPLICATION,
      sendingFacility: raw.HL7_SENDING_FACILITY,
      receivingApplication: raw.HL7_RECEIVING_APPLICATION,
      receivingFacility: raw.HL7_RECEIVING_FACILITY,
    },
    assigningAuthority: raw.HL7_ASSIGNING_AUTHORITY,
    ...(raw.HL7_EMR_ASSIGNING_AUTHORITY ? { emrAssigningAuthority: raw.HL7_EMR_ASSIGNING_AUTHORITY } : {}),
    ackTimeoutMs: raw.HL7_ACK_TIMEOUT_MS,
    patientEvents: { created, changed },
    maxMessageBytes: raw.HL7_MAX_MESSAGE_BYTES,
    labReportTypes: raw.HL7_LAB_REPORT_TYPES,
    prescriptionTypes: raw.HL7_PRESCRIPTION_TYPES,
    requireMapped: raw.HL7_REQUIRE_MAPPED,
  };
}

/** The listener's certificate and key go together; a CA alone is for checking the EMR's (mllps://). */
function tlsFiles(raw: Hl7Raw, problems: string[]): Hl7TlsFiles {
  if (Boolean(raw.HL7_TLS_CERT_PATH) !== Boolean(raw.HL7_TLS_KEY_PATH))
    problems.push(
      `${raw.HL7_TLS_CERT_PATH ? 'HL7_TLS_KEY_PATH' : 'HL7_TLS_CERT_PATH'}: required with ${raw.HL7_TLS_CERT_PATH ? 'HL7_TLS_CERT_PATH' : 'HL7_TLS_KEY_PATH'} (the listener's certificate and its key)`,
    );
  return {
    ...(raw.HL7_TLS_CERT_PATH ? { certPath: resolve(raw.HL7_TLS_CERT_PATH) } : {}),
    ...(raw.HL7_TLS_KEY_PATH ? { keyPath: resolve(raw.HL7_TLS_KEY_PATH) } : {}),
    ...(raw.HL7_TLS_CA_PATH ? { caPath: resolve(raw.HL7_TLS_CA_PATH) } : {}),
  };
}

/** Patient data crosses the network only over TLS in production, loopback excepted (an engine on this host). */
function productionRules(raw: Hl7Raw, listenHost: string, tls: Hl7TlsFiles, ctx: EmrSettingsContext, problems: string[]): void {
  const url = raw.HL7_SEND_URL;
  if (url && url !== 'bundled' && url.startsWith('mllp://') && !ctx.isLoopback(url.replace(/^mllp:/, 'http:')))
    problems.push('HL7_SEND_URL: must be mllps:// (TLS) with NODE_ENV=production (loopback excepted)');
  const loopbackListener = ctx.isLoopback(`http://${listenHost.includes(':') ? `[${listenHost}]` : listenHost}`);
  if (!loopbackListener && !tls.certPath)
    problems.push(
      'HL7_TLS_CERT_PATH: the listener takes patient data over TLS with NODE_ENV=production (set it and HL7_TLS_KEY_PATH), unless HL7_LISTEN_HOST is loopback',
    );
}
