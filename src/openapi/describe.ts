// What an API description says about each route, for build.ts to turn into an OpenAPI 3.1 document. The
// schemas are the zod schemas the routes validate with (imported, never copied), so the document cannot
// describe a body the route would refuse; responses are zod schemas too where the answer has a fixed shape.
import type { z } from 'zod';

/** A JSON Schema written by hand, for what is not JSON described by zod (text/plain, a JWKS). */
export type JsonSchema = Record<string, unknown>;

/** A zod schema with the name it takes in components.schemas. */
export interface Named {
  name: string;
  schema: z.ZodType;
}

export const named = (name: string, schema: z.ZodType): Named => ({ name, schema });

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface ParameterDescription {
  schema: z.ZodType | JsonSchema;
  description?: string;
  /** Path parameters are always required; query and header parameters only when this says so. */
  required?: boolean;
}

export interface ResponseDescription {
  description: string;
  /** JSON (application/json) unless `contentType` says otherwise. */
  body?: Named | JsonSchema;
  contentType?: string;
  headers?: Record<string, ParameterDescription>;
}

export interface RouteDescription {
  method: Method;
  /** OpenAPI form: `/admin/events/{eventId}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** The API's bearer scheme (ApiDescription.bearer) applies; false: open. */
  auth: boolean;
  /** Descriptions of the path's `{params}` (each defaults to a string). */
  params?: Record<string, ParameterDescription>;
  /** The query parameters; a zod shape as parseListQuery takes, or hand-written descriptions. */
  query?: Record<string, z.ZodType | ParameterDescription>;
  headers?: Record<string, ParameterDescription>;
  body?: { schema: Named; required?: boolean; description?: string; contentType?: string };
  /** Success answers (by status). */
  responses: Record<number, ResponseDescription>;
  /** Error answers (by status): each carries the error body, described by the text given. */
  errors?: Record<number, string>;
}

export interface ApiDescription {
  title: string;
  description: string;
  /** The bearer scheme of routes with `auth: true`. */
  bearer?: { name: string; description: string };
  tags: { name: string; description: string }[];
  routes: RouteDescription[];
}
