// The MSH (and EVN) of what the adapter sends: HL7 v2.5.1, processing id P, original acknowledgment mode (MSH-15
// and MSH-16 left empty, which is what selects it). The header context is explicit, clock reading included, so
// a message built twice from the same inputs is the same text, and MSH-10 is the caller's: unchanged when that
// message is sent again.
//
// | MSH | field                 | value                                  |
// |-----|-----------------------|----------------------------------------|
// | 1-2 | separators            | `|` and `^~\&`                         |
// | 3-6 | sending/receiving     | application, facility (HD.1)           |
// | 7   | date/time of message  | now, UTC, `YYYYMMDDHHMMSS+0000`        |
// | 9   | message type (MSG)    | code^trigger^structure: `ADT^A28^ADT_A05` |
// | 10  | message control id    | controlId                              |
// | 11  | processing id         | `P`                                    |
// | 12  | version id            | `2.5.1`                                |
import type { Hl7Segment } from '@medplum/core';
import { mshSegment, segment } from './compose.ts';
import { hl7Now } from './time.ts';

export const HL7_VERSION = '2.5.1';

export interface HeaderContext {
  sendingApplication: string;
  sendingFacility: string;
  receivingApplication: string;
  receivingFacility: string;
  /** HL7_ASSIGNING_AUTHORITY: the namespace the service's ids travel under. */
  assigningAuthority: string;
  /** MSH-10: unique per message, the same when that message is sent again. */
  controlId: string;
  /** The injected clock's reading, ms since the epoch. */
  now: number;
}

export function buildMsh(h: HeaderContext, type: readonly [code: string, trigger: string, structure: string]): Hl7Segment {
  return mshSegment([
    h.sendingApplication,
    h.sendingFacility,
    h.receivingApplication,
    h.receivingFacility,
    hl7Now(h.now),
    '',
    type,
    h.controlId,
    'P',
    HL7_VERSION,
  ]);
}

/** EVN-1 the trigger (kept although deprecated: many engines still route on it), EVN-2 recorded date/time. */
export function buildEvn(h: HeaderContext, trigger: string): Hl7Segment {
  return segment('EVN', [trigger, hl7Now(h.now)]);
}
