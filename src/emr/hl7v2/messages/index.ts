// The HL7 v2.5.1 messages of the HL7 v2 EMR module: what the adapter builds and sends (ADT, SIU), what it reads
// from the EMR (acknowledgments, identities, documents), and its own acknowledgments. Pure functions over
// Hl7Message (@medplum/core); the transport (MLLP) and the port live beside this folder.
export { type AckOptions, type AckRead, buildAck, readAck } from './ack.ts';
export { buildPatientMessage, type PatientMessageInput, type PatientTrigger } from './adt.ts';
export { type DecodedMessage, decodeMessageBytes } from './charset.ts';
export type { BuiltMessage } from './compose.ts';
export { type DocumentOptions, type DocumentRead, defaultPatientHandle, readDocument } from './document.ts';
export { escapeValue, unescapeValue } from './escape.ts';
export { HL7_VERSION, type HeaderContext } from './header.ts';
export { type IdentityRead, readIdentity } from './identity.ts';
export { joinName, splitName } from './names.ts';
export type { AuthorityOptions } from './patient.ts';
export { type MessageKey, messageKey, messageType, parseMessage } from './read.ts';
export { accept, ERROR_TEXT, type Hl7ErrorCode, type Read, type Refusal, refuse } from './refusal.ts';
export { type AppointmentMessageInput, type AppointmentTrigger, buildAppointmentMessage, fillerStatus } from './siu.ts';
export { hl7DateTime, hl7Now } from './time.ts';
