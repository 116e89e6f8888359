// One JSON call over undici: the body sent as JSON, the answer's status and parsed body (undefined when
// empty). For the adapter's own calls to its neighbours' control and admin APIs, and for tests and benchmarks.
import { request } from 'undici';

export async function requestJson<T = Record<string, unknown>>(
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: T }> {
  const res = await request(url, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: (text ? JSON.parse(text) : undefined) as T };
}
