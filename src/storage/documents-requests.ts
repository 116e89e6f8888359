// The outbox's stored requests, engine-neutral: a document request (patient name and phone, label, the file's
// bytes) is stored sealed for its row (src/sealing/, ./sealed-contexts.ts OUTBOX_REQUEST), with the size and
// SHA-256 of its file beside it in clear, which stay once the request is gone (NULL when the document may no
// longer be sent). A request is prepared (sealed, its digest taken) before the transaction that writes it.
//
// A stored request that does not open (its key missing, the value damaged, or sealed for another row) throws
// the sealing error from requestOf; the pusher's send path takes it as any request that cannot be sent: not
// retryable, so the document goes FAILED here with the error's code (data_key_missing, sealed_value_invalid,
// sealed_value_misplaced) and its message, naming the row and the key id, as the status reason. A document
// FAILED here keeps its request and can be sent again (resend) once the key is back.
import { createHash } from 'node:crypto';
import type { DocumentRequest } from '../contract/documents.ts';
import type { Sealer } from '../sealing/sealer.ts';
import type { NewDocument, ScanFiling } from './documents.ts';
import { OUTBOX_REQUEST, sealContext } from './sealed-contexts.ts';

/** The decoded file's size in bytes and its SHA-256 (lowercase hex); null when the file is given by URL. */
export interface DocumentDigest {
  size: number;
  sha256: string;
}

/** A request ready to be written to its row. */
export interface StoredRequest {
  /** The request as JSON (plain: its length is what the request memory counts). */
  json: string;
  /** What the row's `request` column holds: the JSON sealed for the row, or (clear sealer) the JSON itself. */
  stored: string;
  digest: DocumentDigest | null;
}

/** The size and SHA-256 of a request's file, from its base64; null when the file is given by URL. */
export function digestOf(request: DocumentRequest): DocumentDigest | null {
  const base64 = request.file.base64;
  if (base64 === undefined) return null;
  const bytes = Buffer.from(base64, 'base64');
  return { size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** The context a request is sealed for: its row. */
export const requestContext = (externalId: string): string => sealContext(OUTBOX_REQUEST, externalId);

/** Seals a request for the row of `externalId`, with its file's digest. */
export function storedRequest(sealer: Sealer, externalId: string, request: DocumentRequest): StoredRequest {
  const json = JSON.stringify(request);
  return { json, stored: sealer.seal(json, requestContext(externalId)), digest: digestOf(request) };
}

/** The request stored in the row of `externalId`, opened and parsed; throws the sealing error when it does not open. */
export function openStoredRequest(sealer: Sealer, externalId: string, stored: string): DocumentRequest {
  return JSON.parse(sealer.openText(stored, requestContext(externalId))) as DocumentRequest;
}

/** A new document with its request ready to be written (null: a document the checks refused keeps none). */
export interface PreparedDocument {
  document: NewDocument;
  request: StoredRequest | null;
}

export function prepareDocument(sealer: Sealer, e: NewDocument): PreparedDocument {
  return { document: e, request: e.rejected || !e.request ? null : storedRequest(sealer, e.externalId, e.request) };
}

/** A scan's filing with what it writes ready: a new document's request, or a requeued one's. */
export type PreparedFiling =
  | { kind: 'new'; prepared: PreparedDocument }
  | (Extract<ScanFiling, { kind: 'requeue' }> & { stored: StoredRequest })
  | Extract<ScanFiling, { kind: 'rejection' }>;

export function prepareFiling(sealer: Sealer, f: ScanFiling): PreparedFiling {
  if (f.kind === 'new') return { kind: 'new', prepared: prepareDocument(sealer, f.document) };
  if (f.kind === 'requeue') return { ...f, stored: storedRequest(sealer, f.externalId, f.request) };
  return f;
}
