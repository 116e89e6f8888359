// What a document must pass before it leaves (the interface's rules, checked locally so a bad document
// gets a clear reason at once instead of a round trip): the request shape, PDF/JPEG/PNG by leading
// bytes, at most 15 MB, a filename, https only for URLs, and a way to identify the patient.
import {
  base64DecodedLength,
  labReportRequestSchema,
  MAX_FILE_BYTES,
  mimeTypeFromFilename,
  prescriptionRequestSchema,
  sniffMimeType,
  type DocumentRequest,
} from '../contract/documents.ts';
import type { DocumentType } from '../contract/events.ts';

export type CheckResult = { ok: true; request: DocumentRequest } | { ok: false; code: string; reason: string };

const reject = (code: string, reason: string): CheckResult => ({ ok: false, code, reason });

export function checkDocument(documentType: DocumentType, input: unknown): CheckResult {
  const schema = documentType === 'lab_report' ? labReportRequestSchema : prescriptionRequestSchema;
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return reject('invalid_request', `${issue.path.join('.') || 'body'}: ${issue.message}`);
  }
  const request = parsed.data;
  const file = request.file;
  if (file.url !== undefined) {
    let protocol: string;
    try {
      protocol = new URL(file.url).protocol;
    } catch {
      return reject('file_url_rejected', 'file.url is not a URL');
    }
    if (protocol !== 'https:') return reject('file_url_rejected', 'file.url must be https');
  } else {
    // Whitespace only shortens the decoded length: a text short enough as it is needs no closer look.
    if ((file.base64!.length * 3) / 4 > MAX_FILE_BYTES && base64DecodedLength(file.base64!) > MAX_FILE_BYTES)
      return reject('file_too_large', 'the file is larger than 15 MB');
    const head = Buffer.from(file.base64!.slice(0, 24), 'base64');
    if (!sniffMimeType(head)) return reject('unsupported_file_type', 'only PDF, JPEG and PNG files are accepted (judged by content)');
  }
  const mimeType =
    file.mimeType ?? mimeTypeFromFilename(file.filename) ?? (file.base64 ? sniffMimeType(Buffer.from(file.base64.slice(0, 24), 'base64')) : undefined);
  if (!request.patientExternalId && !(request.patientPhone && request.patientName))
    return reject('patient_unresolvable', 'a patientExternalId the service knows, or patientPhone and patientName, is required');
  return { ok: true, request: { ...request, file: { ...file, ...(mimeType ? { mimeType } : {}) } } };
}
