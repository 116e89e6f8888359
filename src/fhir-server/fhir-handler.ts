// One FHIR request against the in-memory data: @medplum/fhir-router's FhirRouter over its MemoryRepository
// (with indexes for identifier and _lastUpdated searches: ./indexed-repository.ts; transactions that undo:
// ./transactional-repository.ts), with every successful write journaled to the data file when there is one (for
// a transaction or batch posted to the base, each entry written).
//
// Each write request is one repository transaction, from the router's first read to the journal: an answer with
// an error (a transaction Bundle whose entry failed) is rolled back and journals nothing. The router resolves a
// Bundle's conditional creates, and the urn:uuid references to them, before its own withTransaction, and the
// journal's lines must come in the order the writes were applied: both hold only while no other write runs in
// between. Today none could (handling a request never waits on I/O, so it runs to its end before the next is
// read); this keeps it so should a step come to wait (an asynchronous journal, a slower store).
import type { IncomingHttpHeaders } from 'node:http';
import { getStatus, isOk, normalizeOperationOutcome } from '@medplum/core';
import { FhirRouter, type FhirRequest as RouterRequest, type FhirResponse, type HttpMethod } from '@medplum/fhir-router';
import type { Bundle, BundleEntry, Resource } from '@medplum/fhirtypes';
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import { outcome } from './http.ts';
import { TransactionalRepository } from './transactional-repository.ts';
import { createJournal, type JournalEntry, replayJournal, type ResourceJournal } from './persistence.ts';

export const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface FhirRequest {
  method: HttpMethod;
  url: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface FhirAnswer {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

export interface FhirHandlerOptions {
  dataFile?: string;
  /** Stamps meta.lastUpdated on writes. */
  clock?: Clock;
  logger: Logger;
  /** false: If-None-Exist (and a Bundle entry's request.ifNoneExist) is dropped, so every create is a plain create. */
  conditionalCreate: boolean;
  /** Default true. false: a Bundle posted to the base (transaction or batch) is refused with 405. */
  transactions?: boolean;
}

export type FhirHandler = (req: FhirRequest) => Promise<FhirAnswer>;

// A stand-in for FHIR servers without conditional create: they ignore the header rather than refuse it.
function withoutIfNoneExist(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const { 'if-none-exist': _dropped, ...rest } = headers;
  return rest;
}

/** The resource a DELETE names (`Patient/12`), from its URL. */
const deletedPath = (url: string): string => url.split('?')[0]!.replace(/^\//, '');

/** A POST to the base: a Bundle of type transaction or batch, whatever its body holds. */
const isBundlePost = (req: FhirRequest): boolean => req.method === 'POST' && (req.url.split('?')[0] ?? '').replace(/\/+/g, '') === '';

/** The same Bundle with no entry's request.ifNoneExist, as a server without conditional create would read it. */
function withoutEntryIfNoneExist(body: unknown): unknown {
  const bundle = body as Bundle | undefined;
  if (bundle?.resourceType !== 'Bundle' || !Array.isArray(bundle.entry)) return body;
  return {
    ...bundle,
    entry: bundle.entry.map((e): BundleEntry => {
      if (!e.request) return e;
      const { ifNoneExist: _dropped, ...request } = e.request;
      return { ...e, request };
    }),
  };
}

/** Carries an answer with an error out of the repository's transaction, so that it rolls back. */
class Refused extends Error {
  constructor(readonly answer: FhirResponse) {
    super('refused');
  }
}

export async function createFhirHandler(opts: FhirHandlerOptions): Promise<FhirHandler> {
  const repo = new TransactionalRepository(opts.clock);
  const router = new FhirRouter();
  let journal: ResourceJournal | undefined;
  if (opts.dataFile) {
    const restored = await replayJournal(opts.dataFile, repo);
    journal = createJournal(opts.dataFile);
    opts.logger.info({ restored }, 'FHIR data restored');
  }

  function journalWrite(req: FhirRequest, resource: Resource | undefined): void {
    if (!journal) return;
    if (isBundlePost(req)) journal.record(writtenEntries(req.body as Bundle, resource as Bundle | undefined));
    else if (req.method === 'DELETE') journal.record([{ deleted: deletedPath(req.url) }]);
    else if (resource && 'id' in resource) journal.record([resource]);
  }

  /** Each entry the response says was written (its entries answer the request's, in order); a found one is not. */
  function writtenEntries(sent: Bundle, answered: Bundle | undefined): JournalEntry[] {
    const written: JournalEntry[] = [];
    (answered?.entry ?? []).forEach((entry, i) => {
      const method = sent.entry?.[i]?.request?.method;
      const status = entry.response?.status ?? '';
      if (!/^2/.test(status) || !method) return;
      if (method === 'DELETE') written.push({ deleted: deletedPath(sent.entry![i]!.request!.url) });
      else if (entry.resource?.id && (status.startsWith('201') || method === 'PUT' || method === 'PATCH')) written.push(entry.resource);
    });
    return written;
  }

  async function applyWrite(request: RouterRequest, req: FhirRequest): Promise<FhirResponse> {
    try {
      return await repo.withTransaction(async () => {
        const answer = await router.handleRequest(request, repo);
        if (!isOk(answer[0])) throw new Refused(answer);
        journalWrite(req, answer[1]);
        return answer;
      });
    } catch (err) {
      if (err instanceof Refused) return err.answer;
      throw err;
    }
  }

  return async (req) => {
    if (opts.transactions === false && isBundlePost(req))
      return { status: 405, body: outcome('not-supported', 'this server takes no transaction or batch Bundle'), headers: {} };
    const headers = opts.conditionalCreate ? req.headers : withoutIfNoneExist(req.headers);
    const body = opts.conditionalCreate || !isBundlePost(req) ? req.body : withoutEntryIfNoneExist(req.body);
    // Without `transactions` the router takes a transaction Bundle as a batch, each entry on its own.
    const request: RouterRequest = { method: req.method, url: req.url, pathname: '', query: {}, params: {}, body, headers, config: { transactions: true } };
    const [result, resource] = WRITES.has(req.method) ? await applyWrite(request, req) : await router.handleRequest(request, repo);
    const status = getStatus(result);
    const location: Record<string, string> = status === 201 && resource ? { location: `/${resource.resourceType}/${resource.id}` } : {};
    return { status, body: resource ?? normalizeOperationOutcome(result), headers: location };
  };
}
