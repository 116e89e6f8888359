// What a span may carry: identifiers only (event ids, service ids, EMR ids, message control ids, types, status
// and error codes), never a name, phone, label, body or token. The same rule as the logs (src/logger.ts), with a
// stricter backstop: a key that is not on this list is dropped, and a text value that does not look like an
// identifier (white space in it, or longer than one) is replaced. test/tracing/attributes.test.ts holds the list
// to that rule, and test/tracing/no-patient-data.test.ts runs marked names, phones and labels through.

/** Every attribute key a span of emr-bridge may carry, and what it holds. */
export const ATTRIBUTE_KEYS = {
  'http.request.method': 'the HTTP method of a call or a request',
  'http.route': 'the route a request matched (a template, never a path with ids)',
  'http.response.status_code': 'the HTTP status answered',
  'emr_bridge.event.id': "a webhook's eventId",
  'emr_bridge.event.type': "a webhook's eventType (appointment.created)",
  'emr_bridge.event.attempt': 'the attempt at an event, counted from 1',
  'emr_bridge.event.outcome': 'what processing led to: applied, discarded_stale, retry, wait, dead, released',
  'emr_bridge.event.duplicate': 'the eventId was stored already: acknowledged, not stored again',
  'emr_bridge.verification': 'the webhook signature check: valid, or the reason it failed',
  'emr_bridge.entity.type': 'patient, doctor, location, appointment',
  'emr_bridge.service_id': "the service's id of the entity (a mapping's, an event's)",
  'emr_bridge.emr.id': "the EMR's id of a record (Patient/12, MRN:MRN000012)",
  'emr_bridge.error.code': "a failure's code (emr_unavailable, service_unreachable), never its message",
  'emr_bridge.document.external_id': "a document's externalId: what ties its spans together",
  'emr_bridge.document.type': 'lab_report or prescription',
  'emr_bridge.document.source': 'emr, api or cli',
  'emr_bridge.document.status': "the document's status (queued, SENT, HELD, FAILED, SUPPRESSED, REJECTED)",
  'emr_bridge.document.attempt': 'the send attempt, counted from 1',
  'emr_bridge.document.emr_id': "the EMR's id of the document (its DocumentReference, or the MDM/ORU's)",
  'emr_bridge.scan.filed': 'documents a scan of the EMR filed in the outbox',
  'fhir.resource_type': 'the FHIR resource type a call reads or writes',
  'hl7.message_type': 'MSH-9 of an HL7 v2 message (SIU^S12)',
  'hl7.message_control_id': 'MSH-10 of an HL7 v2 message',
  'hl7.ack_code': "MSA-1 of the EMR's acknowledgment (AA, AE, AR, CA, CE, CR)",
} as const;

export type AttributeKey = keyof typeof ATTRIBUTE_KEYS;
export type SpanAttributes = { readonly [K in AttributeKey]?: string | number | boolean | undefined };

const ALLOWED: ReadonlySet<string> = new Set(Object.keys(ATTRIBUTE_KEYS));

/** An identifier: no white space, and no longer than one may be (an id, a code, a type). */
const IDENTIFIER = /^[^\s]{0,200}$/;

/** What replaces a text value that does not look like an identifier. */
export const REFUSED_VALUE = '[refused]';

/**
 * The attributes a span may keep, from those given: keys off the list are dropped, text that is no identifier is
 * replaced, undefined values left out. (The types already keep other keys out of the code; this holds at run time.)
 */
export function allowedAttributes(given: SpanAttributes): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const key in given) {
    const value = (given as Record<string, string | number | boolean | undefined>)[key];
    if (value === undefined || !ALLOWED.has(key)) continue;
    out[key] = typeof value === 'string' && !IDENTIFIER.test(value) ? REFUSED_VALUE : value;
  }
  return out;
}
