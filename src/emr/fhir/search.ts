// Reading a FHIR search answer without trusting the server to have filtered it. A server may ignore a search
// parameter it does not support (silently, as the specification allows), ignore `_count` and page its answer,
// or put an OperationOutcome among the entries (`search.mode: outcome`). So only entries of the type asked for
// whose mode is `match` (or unsaid: Medplum and others leave it out) are results, every page is read by its
// `next` link, and a record found "by identifier" is one that carries that identifier itself.
import type { Bundle, BundleEntry, Identifier, Resource } from '@medplum/fhirtypes';
import { EmrError } from '../errors.ts';
import type { FhirHttp } from './http.ts';

/** Pages read at most for one search: a server that ignores the query would otherwise be read whole. */
export const MAX_SEARCH_PAGES = 50;

/** The entries of one page that are results of a search for `resourceType` (not includes, not outcomes). */
export function matchesOf<T extends Resource>(bundle: unknown, resourceType: T['resourceType']): T[] {
  const b = bundle as Partial<Bundle> | undefined;
  if (b?.resourceType !== 'Bundle')
    throw new EmrError('emr_unavailable', `the EMR answered a ${resourceType} search with ${b?.resourceType ?? 'something'} that is not a Bundle`);
  return (b.entry ?? []).filter((e: BundleEntry) => isMatch(e) && e.resource?.resourceType === resourceType).map((e) => e.resource as T);
}

const isMatch = (e: BundleEntry): boolean => e.search?.mode === undefined || e.search.mode === 'match';

/**
 * The `next` page's path relative to the EMR's base, or undefined when there is none. A link off the base (another
 * host, or another server's path) is refused: the adapter's token is never sent there.
 */
export function nextPath(bundle: Bundle, baseUrl: string): string | undefined {
  const next = bundle.link?.find((l) => l.relation === 'next')?.url;
  if (!next) return undefined;
  const base = `${baseUrl.replace(/\/+$/, '')}/`;
  const absolute = new URL(next, base).href;
  if (!absolute.startsWith(base))
    throw new EmrError('emr_rejected', "the EMR's search answer links its next page off the FHIR base address; it is not followed");
  return absolute.slice(base.length);
}

/** Every result of `query` (a path such as `Patient?identifier=…`), page after page. */
export async function searchAll<T extends Resource>(http: FhirHttp, resourceType: T['resourceType'], query: string): Promise<T[]> {
  const found: T[] = [];
  let path: string | undefined = query;
  for (let page = 0; path !== undefined; page++) {
    if (page === MAX_SEARCH_PAGES)
      throw new EmrError('emr_rejected', `the EMR's ${resourceType} search answered more than ${MAX_SEARCH_PAGES} pages; is a search parameter ignored?`);
    const bundle = (await http.call<Bundle>('GET', path)).body;
    found.push(...matchesOf<T>(bundle, resourceType));
    path = nextPath(bundle, http.baseUrl);
  }
  return found;
}

/** Whether the record itself carries `system|value` (never what the server says it matched). */
export const carriesIdentifier = (resource: Resource, system: string, value: string): boolean =>
  ((resource as { identifier?: Identifier[] }).identifier ?? []).some((i) => i.system === system && i.value === value);

/**
 * The one record of `resourceType` carrying `system|value`, or undefined. Two or more distinct records carrying it
 * are a conflict for a person (a dead letter naming them), never a pick.
 */
export async function findOneByIdentifier<T extends Resource>(
  http: FhirHttp,
  resourceType: T['resourceType'],
  system: string,
  value: string,
): Promise<T | undefined> {
  const query = `${resourceType}?identifier=${encodeURIComponent(`${system}|${value}`)}`;
  const carrying = (await searchAll<T>(http, resourceType, query)).filter((r) => carriesIdentifier(r, system, value));
  const ids = [...new Set(carrying.map((r) => r.id))];
  if (ids.length > 1)
    throw new EmrError(
      'emr_record_conflict',
      `${ids.length} EMR records carry the service's identifier ${value}: ${ids.map((id) => `${resourceType}/${id}`).join(', ')}; a person must merge them or remove the identifier from all but one`,
    );
  return carrying[0];
}
