// One FHIR request against the in-memory data: @medplum/fhir-router's FhirRouter over its MemoryRepository
// (with indexes for identifier and _lastUpdated searches: ./indexed-repository.ts), with every successful
// write journaled to the data file when there is one.
import type { IncomingHttpHeaders } from 'node:http';
import { getStatus, isOk, normalizeOperationOutcome } from '@medplum/core';
import { FhirRouter, type HttpMethod } from '@medplum/fhir-router';
import type { Resource } from '@medplum/fhirtypes';
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import { IndexedMemoryRepository } from './indexed-repository.ts';
import { createJournal, replayJournal, type ResourceJournal } from './persistence.ts';

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
  /** false: If-None-Exist is dropped, so every create is a plain create. */
  conditionalCreate: boolean;
}

export type FhirHandler = (req: FhirRequest) => Promise<FhirAnswer>;

// A stand-in for FHIR servers without conditional create: they ignore the header rather than refuse it.
function withoutIfNoneExist(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const { 'if-none-exist': _dropped, ...rest } = headers;
  return rest;
}

export async function createFhirHandler(opts: FhirHandlerOptions): Promise<FhirHandler> {
  const repo = new IndexedMemoryRepository(opts.clock);
  const router = new FhirRouter();
  let journal: ResourceJournal | undefined;
  if (opts.dataFile) {
    const restored = await replayJournal(opts.dataFile, repo);
    journal = createJournal(opts.dataFile);
    opts.logger.info({ restored }, 'FHIR data restored');
  }

  function journalWrite(req: FhirRequest, resource: Resource | undefined): void {
    if (req.method === 'DELETE') journal?.recordDeletion(req.url.split('?')[0]!.replace(/^\//, ''));
    else if (resource && 'id' in resource) journal?.record(resource);
  }

  return async (req) => {
    const headers = opts.conditionalCreate ? req.headers : withoutIfNoneExist(req.headers);
    const [result, resource] = await router.handleRequest(
      { method: req.method, url: req.url, pathname: '', query: {}, params: {}, body: req.body, headers },
      repo,
    );
    const status = getStatus(result);
    if (isOk(result) && WRITES.has(req.method)) journalWrite(req, resource as Resource | undefined);
    const location: Record<string, string> = status === 201 && resource ? { location: `/${resource.resourceType}/${resource.id}` } : {};
    return { status, body: resource ?? normalizeOperationOutcome(result), headers: location };
  };
}
