// The CLI's way into a running adapter: its admin API over HTTP, with ADMIN_TOKEN. Commands that change
// state go through the adapter rather than the database file, so they respect its leases and ordering.
import type { Config } from '../config.ts';
import { request } from 'undici';
import { requestJson } from '../http/json-request.ts';
import { UsageError } from './args.ts';
import { cliDefaults } from './defaults.ts';

export interface AdminClient {
  call<T = unknown>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<{ status: number; body: T }>;
  /** A call whose body (if any) is text of its own type, and whose answer is read as text: a CSV import or export. */
  text(method: 'GET' | 'POST', path: string, body?: { contentType: string; text: string }): Promise<{ status: number; type: string; text: string }>;
}

export function adminClientFrom(config: Config, adminUrl: string | undefined, adminToken: string | undefined): AdminClient {
  const defaults = cliDefaults(config);
  const base = (adminUrl ?? defaults.adminUrl).replace(/\/+$/, '');
  const token = adminToken ?? defaults.adminToken;
  if (!token) throw new UsageError('ADMIN_TOKEN (or --admin-token) is required to reach the admin API');
  const headers = { authorization: `Bearer ${token}`, 'x-emr-bridge-source': 'cli' };
  return {
    call: (method, path, body) => requestJson<never>(method, `${base}/admin${path}`, body, headers),
    async text(method, path, body) {
      const res = await request(`${base}/admin${path}`, {
        method,
        headers: body ? { ...headers, 'content-type': body.contentType } : headers,
        ...(body ? { body: body.text } : {}),
      });
      return { status: res.statusCode, type: String(res.headers['content-type'] ?? ''), text: await res.body.text() };
    },
  };
}

/** Prints an admin answer: the JSON on success, the error's code and message otherwise. */
export function report(res: { status: number; body: unknown }, out: (s: string) => void): number {
  if (res.status >= 200 && res.status < 300) {
    out(JSON.stringify(res.body, null, 2));
    return 0;
  }
  const err = (res.body as { error?: { code?: string; message?: string } } | undefined)?.error;
  out(`error ${res.status}: ${err?.code ?? 'unknown'}: ${err?.message ?? ''}`);
  return 1;
}
