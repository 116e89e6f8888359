// A FHIR server on loopback that behaves as many real ones may, and none of the bundled one does: it ignores a
// search parameter it does not know (here every one but `_id`), ignores `_count` and pages its answers by `next`
// links, can put an OperationOutcome (`search.mode: outcome`) before the results, and can answer a create with
// headers only (Location and ETag, no body). It declares create but no conditional create and no transaction,
// and notes every request, so a test can show what the adapter wrote and where.
import { createServer, type IncomingMessage } from 'node:http';
import type { Bundle, BundleEntry, Resource } from '@medplum/fhirtypes';

export interface CarelessOptions {
  /** Entries per page of a search answer (it ignores `_count`). Default 1. */
  pageSize?: number;
  /** An informational OperationOutcome as the first entry of every search answer. */
  outcomeFirst?: boolean;
  /** A create answers 201 with Location and ETag only: no body. */
  headersOnlyCreate?: boolean;
  /** A create answers 201 with no Location either (the record is made all the same). */
  noLocation?: boolean;
  /** Where `next` links point: default this server's base. */
  nextBase?: string;
  /** Declares (and honours) conditional create: If-None-Exist finds a record carrying that identifier. */
  conditionalCreate?: boolean;
  /** Types whose create it refuses with 405 though it declares it (as an EMR whose rules changed would). */
  refuseCreateOf?: string[];
}

export interface Seen {
  method: string;
  path: string;
  body?: Resource;
}

export interface CarelessFhirServer {
  baseUrl: string;
  seen: Seen[];
  /** The records it holds, by `Type/id`. */
  records: Map<string, Resource>;
  /** Adds a record as if the EMR's staff had made it; returns its id. */
  hold(resource: Resource): string;
  close(): Promise<void>;
}

const capability = (conditionalCreate: boolean) => ({
  resourceType: 'CapabilityStatement',
  status: 'active',
  kind: 'instance',
  fhirVersion: '4.0.1',
  format: ['json'],
  rest: [
    {
      mode: 'server',
      resource: ['Patient', 'Practitioner', 'Location', 'Appointment', 'Communication', 'DocumentReference'].map((type) => ({
        type,
        interaction: [{ code: 'read' }, { code: 'search-type' }, { code: 'create' }, { code: 'update' }],
        ...(conditionalCreate ? { conditionalCreate: true } : {}),
      })),
    },
  ],
});

/** The held record of `type` carrying `identifier=system|value` (If-None-Exist's one form here). */
function carrying(records: Map<string, Resource>, type: string, ifNoneExist: string): Resource | undefined {
  const [system, value] = decodeURIComponent(ifNoneExist.replace(/^identifier=/, '')).split('|');
  return [...records.values()].find(
    (r) =>
      r.resourceType === type &&
      ((r as { identifier?: { system?: string; value?: string }[] }).identifier ?? []).some((i) => i.system === system && i.value === value),
  );
}

async function readJson(req: IncomingMessage): Promise<Resource | undefined> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? (JSON.parse(text) as Resource) : undefined;
}

export async function startCarelessFhirServer(opts: CarelessOptions = {}): Promise<CarelessFhirServer> {
  const records = new Map<string, Resource>();
  const seen: Seen[] = [];
  let nextId = 1000;
  let baseUrl = '';
  const pageSize = opts.pageSize ?? 1;

  const hold = (resource: Resource): string => {
    const id = resource.id ?? String(nextId++);
    records.set(`${resource.resourceType}/${id}`, { ...resource, id, meta: { versionId: '1' } });
    return id;
  };

  function search(type: string, url: URL): Bundle {
    const byId = url.searchParams.get('_id');
    const all = [...records.values()].filter((r) => r.resourceType === type && (byId === null || r.id === byId));
    const page = Number(url.searchParams.get('page') ?? '0');
    const entries: BundleEntry[] = all.slice(page * pageSize, (page + 1) * pageSize).map((resource) => ({ resource, search: { mode: 'match' } }));
    if (opts.outcomeFirst)
      entries.unshift({
        resource: { resourceType: 'OperationOutcome', id: 'search-note', issue: [{ severity: 'information', code: 'informational' }] },
        search: { mode: 'outcome' },
      });
    const more = (page + 1) * pageSize < all.length;
    const next = new URL(url.pathname + url.search, opts.nextBase ?? baseUrl);
    next.searchParams.set('page', String(page + 1));
    return { resourceType: 'Bundle', type: 'searchset', total: all.length, entry: entries, ...(more ? { link: [{ relation: 'next', url: next.href }] } : {}) };
  }

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const body = await readJson(req);
      seen.push({ method: req.method ?? 'GET', path: url.pathname.replace(/^\/fhir\//, '') + url.search, ...(body ? { body } : {}) });
      const [type, id] = url.pathname.replace(/^\/fhir\/?/, '').split('/');
      const send = (status: number, payload?: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { ...(payload === undefined ? {} : { 'content-type': 'application/fhir+json' }), ...headers });
        res.end(payload === undefined ? undefined : JSON.stringify(payload));
      };
      if (type === 'metadata') return send(200, capability(opts.conditionalCreate ?? false));
      if (req.method === 'GET' && type && !id) return send(200, search(type, url));
      if (req.method === 'GET' && type && id) return records.has(`${type}/${id}`) ? send(200, records.get(`${type}/${id}`)) : send(404);
      if (req.method === 'PUT' && type && id && body) {
        const version = String(Number(records.get(`${type}/${id}`)?.meta?.versionId ?? '0') + 1);
        records.set(`${type}/${id}`, { ...body, id, meta: { versionId: version } });
        return send(200, records.get(`${type}/${id}`), { etag: `W/"${version}"` });
      }
      if (req.method === 'POST' && type && opts.refuseCreateOf?.includes(type)) return send(405, { resourceType: 'OperationOutcome', issue: [] });
      if (req.method === 'POST' && type && !id && body) {
        const condition = req.headers['if-none-exist'];
        const existing = opts.conditionalCreate && typeof condition === 'string' ? carrying(records, type, condition) : undefined;
        if (existing) return send(200, undefined, { location: `${baseUrl}/${type}/${existing.id}/_history/1`, etag: 'W/"1"' });
        const made = hold({ ...body, id: undefined } as Resource);
        const location = `${baseUrl}/${type}/${made}/_history/1`;
        if (opts.noLocation) return send(201, undefined, { etag: 'W/"1"' });
        if (opts.headersOnlyCreate) return send(201, undefined, { location, etag: 'W/"1"' });
        return send(201, records.get(`${type}/${made}`), { location, etag: 'W/"1"' });
      }
      send(405, { resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: 'not-supported' }] });
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/fhir`;
  return {
    baseUrl,
    seen,
    records,
    hold,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
