// A FHIR server on loopback that keeps versions and takes changes as a scheduling EMR does: it declares `update`
// or only `patch` per its options, answers every read with its ETag, wants If-Match on a change (428 without it,
// 412 when it names an old version), applies JSON Patch (top-level add, replace, remove), and lets a test edit a
// record "as the EMR's staff would" just before the adapter's next write lands. It notes every request.
import { createServer, type IncomingMessage } from 'node:http';
import type { Resource } from '@medplum/fhirtypes';

export interface VersionedOptions {
  /** How changes are declared: `update` (PUT), or `patch` only. Default `patch`. */
  changeBy?: 'update' | 'patch';
  /** Answer reads with this ETag instead of the version's (an invalid one, to test the fallback). */
  etagOverride?: string;
  /** Leave the version out of reads altogether (no ETag, no meta.versionId). */
  noVersions?: boolean;
}

export interface Seen {
  method: string;
  path: string;
  ifMatch?: string;
  contentType?: string;
  body?: unknown;
}

export interface VersionedFhirServer {
  baseUrl: string;
  seen: Seen[];
  records: Map<string, Resource>;
  hold(resource: Resource & { id: string }): void;
  /** Before each of the next `times` writes, the EMR's staff change the record with `edit` (a new version). */
  staffEditsBeforeWrite(ref: string, edit: (r: Resource) => Resource, times?: number): void;
  close(): Promise<void>;
}

type Op = { op: string; path: string; value?: unknown };

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

function applyPatch(resource: Resource, ops: Op[]): Resource {
  const next = { ...resource } as Record<string, unknown>;
  for (const o of ops) {
    const key = o.path.slice(1).replace(/~1/g, '/').replace(/~0/g, '~');
    if (o.op === 'remove') delete next[key];
    else next[key] = o.value;
  }
  return next as unknown as Resource;
}

export async function startVersionedFhirServer(opts: VersionedOptions = {}): Promise<VersionedFhirServer> {
  const records = new Map<string, Resource>();
  const seen: Seen[] = [];
  const edits = new Map<string, { edit: (r: Resource) => Resource; times: number }>();
  const changeBy = opts.changeBy ?? 'patch';
  const version = (r: Resource) => Number(r.meta?.versionId ?? '0');
  const store = (ref: string, r: Resource, v: number) => records.set(ref, { ...r, meta: { versionId: String(v) } });

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const path = url.pathname.replace(/^\/fhir\/?/, '');
      const body = await readBody(req);
      const ifMatch = req.headers['if-match'];
      seen.push({
        method: req.method ?? 'GET',
        path,
        ...(ifMatch ? { ifMatch } : {}),
        ...(req.headers['content-type'] ? { contentType: req.headers['content-type'] } : {}),
        body,
      });
      const send = (status: number, payload?: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/fhir+json', ...headers });
        res.end(payload === undefined ? undefined : JSON.stringify(payload));
      };
      if (path === 'metadata') {
        const interaction = [{ code: 'read' }, { code: 'search-type' }, { code: changeBy }];
        return send(200, {
          resourceType: 'CapabilityStatement',
          fhirVersion: '4.0.1',
          rest: [{ mode: 'server', resource: ['Patient', 'Appointment'].map((type) => ({ type, interaction })) }],
        });
      }
      const current = records.get(path);
      if (!current) return send(404, { resourceType: 'OperationOutcome', issue: [] });
      if (req.method === 'GET') {
        if (opts.noVersions) {
          const { meta: _meta, ...bare } = current;
          return send(200, bare);
        }
        return send(200, current, { etag: opts.etagOverride ?? `W/"${version(current)}"` });
      }
      if ((req.method === 'PATCH' && changeBy !== 'patch') || (req.method === 'PUT' && changeBy !== 'update'))
        return send(405, { resourceType: 'OperationOutcome', issue: [] });
      const edit = edits.get(path);
      if (edit && edit.times > 0) {
        edit.times--;
        store(path, edit.edit(current), version(current) + 1);
      }
      const now = records.get(path)!;
      if (!ifMatch) return send(428, { resourceType: 'OperationOutcome', issue: [] });
      if (ifMatch !== `W/"${version(now)}"`) return send(412, { resourceType: 'OperationOutcome', issue: [] });
      const next = req.method === 'PATCH' ? applyPatch(now, body as Op[]) : (body as Resource);
      store(path, { ...next, id: now.id } as Resource, version(now) + 1);
      send(200, records.get(path), { etag: `W/"${version(now) + 1}"` });
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}/fhir`,
    seen,
    records,
    hold: (r) => store(`${r.resourceType}/${r.id}`, r, 1),
    staffEditsBeforeWrite: (ref, edit, times = 1) => edits.set(ref, { edit, times }),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
