// One message to the EMR and what its acknowledgment means for the port (docs/connecting-an-hl7-emr.md): AA/CA done;
// AE/CE a refusal of that message (emr_rejected: the event becomes a dead letter holding the ERR text);
// AR/CR, no answer in time or a closed connection an outage (emr_unavailable: the same message, the same
// MSH-10, is sent again with backoff); a listener that cannot be reached at all an EMR-wide incident
// (emr_unreachable: work waits, no budget spent, no dead letters). Each message is a client span (src/tracing/):
// its type (MSH-9), MSH-10 and the acknowledgment code.
import type { Hl7Message } from '@medplum/core';
import { EmrError } from '../errors.ts';
import { inSpan, type SpanScope } from '../../tracing/spans.ts';
import { readAck } from './messages/ack.ts';
import { value } from './messages/read.ts';
import { MllpError } from './mllp/errors.ts';

/**
 * Sends one message over MLLP and resolves with its acknowledgment (the transport's send). `key` names the
 * entity the message is about (`patient:<id>`): messages of one key are never in flight at once (./mllp/link-pool.ts).
 */
export type MllpSend = (message: Hl7Message, key: string) => Promise<Hl7Message>;

/**
 * Sends `message` and resolves once the EMR acknowledged it AA or CA; anything else throws the EmrError it means.
 * Resolving only then is what keeps one entity's messages in order over several links: its next is sent after.
 */
export function sendAccepted(send: MllpSend, message: Hl7Message, what: string, key: string): Promise<void> {
  const msh = message.getSegment('MSH');
  const type = `${value(msh, 9, 1)}^${value(msh, 9, 2)}`;
  return inSpan(`HL7 ${type}`, { 'hl7.message_type': type, 'hl7.message_control_id': value(msh, 10) }, (span) => sendIn(span, send, message, what, key), {
    kind: 'client',
  });
}

async function sendIn(span: SpanScope, send: MllpSend, message: Hl7Message, what: string, key: string): Promise<void> {
  let answer: Hl7Message;
  try {
    answer = await send(message, key);
  } catch (err) {
    throw transportFailure(err, what);
  }
  const ack = readAck(answer);
  if (!ack.ok) throw new EmrError('emr_unavailable', `the EMR's answer to ${what} is not an acknowledgment (${ack.refusal.text})`);
  const { outcome, code, text } = ack.value;
  span.set({ 'hl7.ack_code': code });
  if (outcome === 'accepted') return;
  if (outcome === 'refused') throw new EmrError('emr_rejected', `the EMR refused ${what} (${code})${text ? `: ${text}` : ''}`);
  throw new EmrError('emr_unavailable', `the EMR could not take ${what} now (${code})${text ? `: ${text}` : ''}`);
}

function transportFailure(err: unknown, what: string): EmrError {
  if (!(err instanceof MllpError)) return new EmrError('emr_unavailable', `${what} was not acknowledged`, undefined, err);
  // A TLS failure is the EMR refusing the adapter's certificate (or ours refusing its): no retry cures it by itself.
  if (err.kind === 'tls') return new EmrError('emr_unauthorized', `${what}: ${err.message}`, undefined, err);
  if (err.kind === 'unreachable') return new EmrError('emr_unreachable', `${what}: ${err.message}`, undefined, err);
  return new EmrError('emr_unavailable', `${what}: ${err.message}`, undefined, err);
}
