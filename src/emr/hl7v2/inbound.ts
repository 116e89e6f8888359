// What the adapter's MLLP listener does with a message from the EMR (docs/connecting-an-hl7-emr.md): its ADT and SIU
// feeds name the EMR's ids for records the adapter sent (the mapping, posted to the service once); its MDM and
// ORU messages bring documents for the pusher's outbox (an MDM^T11 cancels one not yet sent). A message is
// acknowledged AA only once what it brought is committed; one taken before (same MSH-3, MSH-4, MSH-10) is
// acknowledged AA again and not acted on twice; one it cannot use gets AE with an ERR naming the field; the
// adapter's own store failing gets AR (the listener's answer to a throw), so the EMR sends it again.
import type { Hl7Message } from '@medplum/core';
import type { Logger } from '../../logger.ts';
import type { EmrInbound } from '../port.ts';
import { buildAck } from './messages/ack.ts';
import { readDocument } from './messages/document.ts';
import { readIdentity } from './messages/identity.ts';
import { messageKey, messageType } from './messages/read.ts';
import type { Refusal } from './messages/refusal.ts';
import { controlIdFor, KEYS, mrnEntries } from './outbound.ts';
import type { Hl7Settings } from './settings.ts';

/** Cancels a pushed document not yet sent (MDM^T11); a refusal when there is none to cancel. */
export type CancelDocument = (documentId: string) => Promise<Refusal | undefined>;

export interface InboundDeps {
  settings: Hl7Settings;
  /** The adapter's side; undefined until the port started (the listener then answers AR: send it again). */
  inbound(): EmrInbound | undefined;
  cancelDocument: CancelDocument;
  now(): number;
  /** Identifiers only: the message type, MSH-10 and the field refused, never a value. */
  logger: Pick<Logger, 'warn'>;
}

/** The state keys of messages taken: `in:<MSH-3>|<MSH-4>|<MSH-10>`. */
export const SEEN_PREFIX = 'in:';

const IDENTITY_TYPES = /^(ADT\^(A01|A04|A08|A28|A31)|SIU\^(S12|S13|S14))$/;
/**
 * A cancellation in the EMR's SIU feed names no id the adapter needs (the appointment was mapped when it was
 * booked) and the service takes no cancellation from an EMR: taken, acknowledged, nothing to do. Refusing it
 * would only park it in the engine's error queue, or hold the feed behind it.
 */
const NOTHING_TO_DO = /^SIU\^S15$/;
const DOCUMENT_TYPES = /^(MDM\^T(02|04|08|10|11)|ORU\^R01)$/;

/** A message acted on, its seen mark written (`marked`: already, in the commit that acted on it), or refused. */
type Outcome = { ok: true; marked?: boolean } | { ok: false; refusal: Refusal };
const ok: Outcome = { ok: true };

export function createInboundHandler(deps: InboundDeps): (message: Hl7Message) => Promise<Hl7Message> {
  const { settings } = deps;
  const authorities = {
    assigningAuthority: settings.assigningAuthority,
    ...(settings.emrAssigningAuthority ? { emrAssigningAuthority: settings.emrAssigningAuthority } : {}),
  };
  const ack = (message: Hl7Message, outcome: Outcome) =>
    buildAck(message, outcome.ok ? 'AA' : 'AE', {
      controlId: controlIdFor(`ack:${message.getSegment('MSH')?.getField(10)?.toString() ?? ''}:${deps.now()}`),
      now: deps.now(),
      ...(outcome.ok ? {} : { error: outcome.refusal }),
    }).message;

  async function identity(message: Hl7Message, inbound: EmrInbound, seen: string): Promise<Outcome> {
    const read = readIdentity(message, authorities);
    if (!read.ok) return read;
    if (read.value === 'none') return ok;
    const { entityType, serviceId, emrId } = read.value;
    const learned = entityType === 'patient' ? mrnEntries(serviceId, emrId) : [[KEYS.filler(serviceId), emrId] as const];
    // The mapping, what it taught the port and the seen mark: one commit, so one fsync per message of the feed.
    await inbound.recordIdentified(read.value, [...learned, [seen, 'AA']]);
    return { ok: true, marked: true };
  }

  async function document(message: Hl7Message, inbound: EmrInbound): Promise<Outcome> {
    const read = readDocument(message, {
      ...authorities,
      labReportTypes: settings.labReportTypes,
      prescriptionTypes: settings.prescriptionTypes,
      now: deps.now(),
      // No MRN in PID-3: no EMR id to name the patient by (a handle would reach the service as patientExternalId);
      // the service identifies the patient by phone and name, as for any document without one.
      patientHandle: () => '',
    });
    if (!read.ok) return read;
    if (read.value.kind === 'cancel') {
      const refusal = await deps.cancelDocument(read.value.documentId);
      return refusal ? { ok: false, refusal } : ok;
    }
    const doc = read.value.document;
    // PID-3 with the service id alone: the MRN the EMR named for that patient is its id at the service.
    const mrn = !doc.patient.id && doc.patient.serviceId ? await inbound.state.get(KEYS.mrn(doc.patient.serviceId)) : undefined;
    await inbound.documentPushed(mrn ? { ...doc, patient: { ...doc.patient, id: mrn } } : doc);
    return ok;
  }

  return async (message) => {
    const inbound = deps.inbound();
    if (!inbound) throw new Error('the HL7 v2 port has not started: the message is refused for now');
    const key = messageKey(message);
    if (!key.ok) return ack(message, key);
    const seen = `${SEEN_PREFIX}${key.value.sendingApplication}|${key.value.sendingFacility}|${key.value.controlId}`;
    if (await inbound.state.get(seen)) return ack(message, ok);
    const type = messageType(message);
    let outcome: Outcome;
    if (IDENTITY_TYPES.test(type)) outcome = await identity(message, inbound, seen);
    else if (NOTHING_TO_DO.test(type)) outcome = ok;
    else if (DOCUMENT_TYPES.test(type)) outcome = await document(message, inbound);
    else
      outcome = {
        ok: false,
        refusal: { field: 'MSH-9', location: { segment: 'MSH', sequence: 1, position: 9 }, code: '200', text: `${type} is not a message the adapter takes` },
      };
    // Only a message acted on is remembered: one refused may come again corrected under the same MSH-10.
    if (outcome.ok) {
      if (!outcome.marked) await inbound.state.put(seen, 'AA');
    } else deps.logger.warn({ type, controlId: key.value.controlId, field: outcome.refusal.field, code: outcome.refusal.code }, 'HL7 message refused (AE)');
    return ack(message, outcome);
  };
}
