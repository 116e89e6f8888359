// Filing documents on request (fileDocument, fileLabResult, POST /_emr/documents): the patient found by
// the service's id or by MRN, the message built (MDM^T02 with TXA-2 `<type code>^<label>`, or ORU^R01) and
// queued for the notify target like any notification, keyed by the patient (outbound.ts), so that over several
// notify connections one patient's documents keep their order. Returns the document id (TXA-12 / OBR-3).
import { randomBytes } from 'node:crypto';
import { AppError, NotFoundError, ValidationError } from '../errors.ts';
import type { DocumentPatient, DocumentRequest, EmrPatient, LabResultRequest } from './model.ts';
import { documentMessage, labResultMessage, type OutboundContext } from './outbound.ts';
import type { EmrState, QueuedMessage } from './state.ts';

/** A one-page synthetic PDF, for a document asked for without a file. */
export const SYNTHETIC_PDF = Buffer.from(
  '%PDF-1.4\n1 0 obj <</Type /Catalog /Pages 2 0 R>> endobj\n2 0 obj <</Type /Pages /Kids [3 0 R] /Count 1>> endobj\n' +
    '3 0 obj <</Type /Page /Parent 2 0 R /MediaBox [0 0 200 100]>> endobj\ntrailer <</Root 1 0 R>>\n%%EOF\n',
);

export interface DocumentTypeCodes {
  labReport: string;
  prescription: string;
}

export interface DocumentFilerDeps {
  state: EmrState;
  /** Absent when there is no notify target: filing is refused. */
  outbound?: OutboundContext;
  typeCodes: DocumentTypeCodes;
}

export interface DocumentFiler {
  fileDocument(req: DocumentRequest): string;
  fileLabResult(req: LabResultRequest): string;
}

const newDocumentId = (): string => `DOC-${randomBytes(6).toString('hex').toUpperCase()}`;

function patientFor(state: EmrState, req: DocumentPatient): EmrPatient {
  if (req.patientServiceId) {
    const p = state.patient(req.patientServiceId);
    if (!p) throw new NotFoundError(`no patient with service id ${req.patientServiceId}`);
    return p;
  }
  if (req.mrn) {
    const p = state.patientByMrn(req.mrn);
    if (!p) throw new NotFoundError(`no patient with MRN ${req.mrn}`);
    return p;
  }
  throw new ValidationError('patientServiceId or mrn is required', 'patientServiceId');
}

function checked(label: string, pdf: Buffer): void {
  if (!label.trim()) throw new ValidationError('label must not be empty', 'label');
  if (pdf.length === 0) throw new ValidationError('the PDF is empty', 'pdf');
}

export function createDocumentFiler(deps: DocumentFilerDeps): DocumentFiler {
  const outbound = (): OutboundContext => {
    if (!deps.outbound) throw new AppError({ code: 'no_notify_target', status: 409, message: 'this EMR has no notify target to file documents to' });
    return deps.outbound;
  };
  // Committed, the message reaches the notifier (EmrState.onQueued).
  const queue = (m: QueuedMessage) => deps.state.commit({ queued: [m] });
  return {
    fileDocument(req) {
      const ctx = outbound();
      checked(req.label, req.pdf);
      const patient = patientFor(deps.state, req);
      const documentId = req.documentId ?? newDocumentId();
      const typeCode = req.documentType === 'prescription' ? deps.typeCodes.prescription : deps.typeCodes.labReport;
      queue(documentMessage(ctx, { documentId, typeCode, label: req.label, pdf: req.pdf, ...(req.filename ? { filename: req.filename } : {}) }, patient));
      return documentId;
    },
    fileLabResult(req) {
      const ctx = outbound();
      checked(req.label, req.pdf);
      const patient = patientFor(deps.state, req);
      const documentId = req.documentId ?? newDocumentId();
      queue(labResultMessage(ctx, { documentId, typeCode: deps.typeCodes.labReport, label: req.label, pdf: req.pdf }, patient));
      return documentId;
    },
  };
}
