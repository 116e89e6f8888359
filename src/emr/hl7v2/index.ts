// The HL7 v2 implementation of the EmrPort, in the pushed shape (src/emr/port.ts): claims and changes go out as
// ADT and SIU messages over HL7_SEND_CONNECTIONS MLLP links (./outbound.ts, ./send.ts, ./mllp/link-pool.ts), the
// EMR names its ids later through its feeds to the adapter's MLLP listener (./inbound.ts), and it pushes
// documents there too. What FHIR writes
// back to the EMR (a document's final status as a Communication) HL7 v2 has no message for here: the adapter
// keeps it (the admin API, the console), and recordDocumentOutcome writes nothing.
import type { Clock } from '../../clock.ts';
import type { Logger } from '../../logger.ts';
import { EmrError } from '../errors.ts';
import type { EmrInbound, EmrPort } from '../port.ts';
import { createInboundHandler, SEEN_PREFIX } from './inbound.ts';
import { parseMllpUrl } from './mllp/endpoint.ts';
import { MllpError } from './mllp/errors.ts';
import { createLinkPool, type LinkCounts, type MllpLinkPool } from './mllp/link-pool.ts';
import { startMllpListener } from './mllp/listener.ts';
import { openSocket } from './mllp/open-socket.ts';
import { createOutbound } from './outbound.ts';
import { createOwnedRecords } from './owned-records.ts';
import { hl7RecordRefs } from './refs.ts';
import type { Hl7Settings } from './settings.ts';

/** The TLS files HL7_TLS_* name, read (./module.ts prepare). */
export interface Hl7Tls {
  cert?: Buffer;
  key?: Buffer;
  ca?: Buffer;
}

export interface Hl7EmrOptions {
  settings: Hl7Settings;
  /**
   * Where the adapter sends: HL7_SEND_URL, or the bundled HL7 EMR's address, which is known only once that
   * listens (after this listener, whose address it is given): read at the first send.
   */
  sendUrl: () => string;
  tls: Hl7Tls;
  clock: Clock;
  logger: Logger;
}

export interface Hl7Emr extends EmrPort {
  /** Where the adapter's listener listens, as `mllp://host:port` (the EMR's outbound feeds go there). */
  listenerUrl: string;
  /** The links to the EMR's listener (HL7_SEND_CONNECTIONS): how many are configured, how many connected now. */
  links(): LinkCounts;
}

/** How long ping waits for a connection to the EMR's listener. */
const PING_TIMEOUT_MS = 5_000;

/** Opens the listener first (the bundled HL7 EMR is told its address), then builds the port over it. */
export async function createHl7Emr(opts: Hl7EmrOptions): Promise<Hl7Emr> {
  const { settings, clock, logger } = opts;
  let inbound: EmrInbound | undefined;
  const handler = createInboundHandler({
    settings,
    inbound: () => inbound,
    cancelDocument: async (documentId) => {
      const answer = await inbound!.documentCancelled(documentId);
      if (answer === 'cancelled') return undefined;
      return {
        field: 'TXA-12',
        location: { segment: 'TXA', sequence: 1, position: 12 },
        code: '103',
        text: answer === 'unknown' ? `no document ${documentId} waits to be sent` : `document ${documentId} has already gone to the service`,
      };
    },
    now: () => clock.now(),
    logger,
  });
  const tls = opts.tls.cert && opts.tls.key ? { cert: opts.tls.cert, key: opts.tls.key, ...(opts.tls.ca ? { ca: opts.tls.ca } : {}) } : undefined;
  const listener = await startMllpListener({
    host: settings.listen.host,
    port: settings.listen.port,
    ...(tls ? { tls } : {}),
    maxMessageBytes: settings.maxMessageBytes,
    logger: logger.child({ component: 'hl7-listener' }),
    onMessage: (message) => handler(message),
  });
  let pool: MllpLinkPool | undefined;
  const outbound = createOutbound({
    settings,
    send: (message, key) => {
      pool ??= createLinkPool({ url: opts.sendUrl(), tls: opts.tls, ackTimeoutMs: settings.ackTimeoutMs, clock, connections: settings.sendConnections });
      return pool.send(message, key);
    },
    state: () => {
      if (!inbound) throw new EmrError('emr_unavailable', 'the HL7 v2 port has not started');
      return inbound.state;
    },
    now: () => clock.now(),
  });
  const listenHost = settings.listen.host === '0.0.0.0' || settings.listen.host === '::' ? '127.0.0.1' : settings.listen.host;
  return {
    listenerUrl: `${tls ? 'mllps' : 'mllp'}://${listenHost.includes(':') ? `[${listenHost}]` : listenHost}:${listener.port}`,
    links: () => pool?.links() ?? { configured: settings.sendConnections, connected: 0 },
    refs: hl7RecordRefs,
    documentSource: 'pushed',
    documentOutcomes: 'adapter',
    async start(given) {
      inbound = given;
    },
    // The marks of messages taken (`in:`), kept to acknowledge a repeat without acting twice; the claims'
    // marks and the EMR's ids are kept for as long as the records live.
    pruneBefore: async (cutoffMs) => (inbound ? inbound.state.pruneBefore(SEEN_PREFIX, cutoffMs) : 0),
    ...outbound,
    ...createOwnedRecords(settings),
    // Nothing to scan: the EMR pushes its documents to the listener.
    listDocumentsChangedSince: async (watermark) => ({ documents: [], watermark: watermark ?? '' }),
    async readDocumentBytes(doc) {
      if ('base64' in doc.content) return Buffer.from(doc.content.base64, 'base64');
      throw new EmrError('document_content_refused', 'an HL7 v2 document carries its content in OBX-5; a URL is not read');
    },
    // The final status stays in the adapter (GET /admin/documents/{externalId}, the console).
    recordDocumentOutcome: async () => undefined,
    async ping() {
      const endpoint = parseMllpUrl(opts.sendUrl());
      try {
        const socket = await openSocket(endpoint, opts.tls, PING_TIMEOUT_MS, AbortSignal.timeout(PING_TIMEOUT_MS));
        socket.destroy();
      } catch (err) {
        const kind = err instanceof MllpError ? err.kind : 'unreachable';
        throw new EmrError(kind === 'tls' ? 'emr_unauthorized' : 'emr_unreachable', `the EMR's MLLP listener: ${(err as Error).message}`);
      }
    },
    async close() {
      await pool?.close();
      await listener.close();
    },
  };
}
