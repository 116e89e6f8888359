// Document requests and responses of the integration API (docs/service-interface.md, with
// docs/decisions.md#document-request-limits). The simulator validates requests with these schemas; the
// pusher checks its own requests with them before anything leaves.
import { z } from 'zod';
import { DOCUMENT_STATUSES, DOCUMENT_TYPES } from './events.ts';

export const MAX_FILE_BYTES = 15 * 1024 * 1024;
export const ACCEPTED_MIME_TYPES = ['application/pdf', 'image/jpeg', 'image/png'] as const;
export type AcceptedMimeType = (typeof ACCEPTED_MIME_TYPES)[number];

export const fileSchema = z
  .object({
    base64: z.string().min(1).optional(),
    url: z.string().min(1).optional(),
    filename: z.string().min(1).max(255),
    mimeType: z.string().min(1).optional(),
  })
  .refine((f) => (f.base64 === undefined) !== (f.url === undefined), {
    message: 'exactly one of file.base64 or file.url is required',
    path: ['base64'],
  });

const common = {
  externalId: z.string().min(1).max(200),
  patientExternalId: z.string().min(1).optional(),
  patientPhone: z
    .string()
    .regex(/^\+[1-9]\d{6,14}$/, 'international format, e.g. +15551234567')
    .optional(),
  patientName: z.string().min(1).optional(),
  label: z.string().min(1).max(500),
  file: fileSchema,
};

export const labReportRequestSchema = z.object({
  ...common,
  meta: z.record(z.string(), z.unknown()).optional(),
});

/** A prescription accepts patientPhone and patientName as a lab report does (docs/decisions.md#prescription-patient-fields). */
export const prescriptionRequestSchema = z.object({
  ...common,
  doctorPhone: z.string().min(1).optional(),
});

export type LabReportRequest = z.infer<typeof labReportRequestSchema>;
export type PrescriptionRequest = z.infer<typeof prescriptionRequestSchema>;
export type DocumentRequest = LabReportRequest | PrescriptionRequest;
export type FileObject = z.infer<typeof fileSchema>;

export const documentResourceSchema = z.looseObject({
  type: z.literal('document'),
  documentType: z.enum(DOCUMENT_TYPES),
  serviceId: z.string().optional(),
  externalId: z.string(),
  patientServiceId: z.string().optional(),
  status: z.enum(DOCUMENT_STATUSES),
  statusReason: z.string().optional(),
  releaseAfter: z.string().optional(),
  sentAt: z.string().optional(),
  action: z.enum(['received', 'found']),
});
export const documentEnvelopeSchema = z.object({ resource: documentResourceSchema });
export type DocumentResource = z.infer<typeof documentResourceSchema>;

/** The request path of each document type. */
export const DOCUMENT_PATHS = { lab_report: 'lab-reports', prescription: 'prescriptions' } as const;

/** Judges a file by its leading bytes, never by its name (415 unsupported_file_type, docs/decisions.md#error-bodies). */
export function sniffMimeType(bytes: Uint8Array): AcceptedMimeType | undefined {
  if (bytes.length >= 5 && bytes[0] === 0x25 && bytes[1] === 0x50 && bytes[2] === 0x44 && bytes[3] === 0x46 && bytes[4] === 0x2d) return 'application/pdf'; // %PDF-
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length >= 8 && [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].every((b, i) => bytes[i] === b)) return 'image/png';
  return undefined;
}

/** mimeType from the filename when the caller leaves it out. */
export function mimeTypeFromFilename(filename: string): AcceptedMimeType | undefined {
  const ext = filename.toLowerCase().split('.').pop();
  if (ext === 'pdf') return 'application/pdf';
  if (ext === 'jpg' || ext === 'jpeg') return 'image/jpeg';
  if (ext === 'png') return 'image/png';
  return undefined;
}

/** Decoded size of a base64 string without decoding it. */
export function base64DecodedLength(b64: string): number {
  const clean = b64.replace(/\s/g, '');
  const padding = clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0;
  return Math.floor((clean.length * 3) / 4) - padding;
}
