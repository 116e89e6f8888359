// Builders that keep a route's description to a few lines (./describe.ts says what each field means): the
// method and path as one string, and what a group of routes shares (tag, auth, error answers) said once.
import type { Method, Named, ResponseDescription, RouteDescription } from './describe.ts';

/** `post /admin/documents`: the method, a space, the path in OpenAPI form. */
export type Endpoint = `${Method} /${string}`;

/** What every route of a group shares. A route's own errors are added to the group's (its own text wins). */
export interface RouteDefaults {
  tag: string;
  auth: boolean;
  errors?: Record<number, string>;
}

type Placed = 'method' | 'path' | 'operationId' | 'summary';

/** A route's own fields; a Named `body` is a required JSON body. */
export type RouteFields = Partial<Omit<RouteDescription, Placed | 'body'>> &
  Pick<RouteDescription, 'responses'> & {
    body?: Named | RouteDescription['body'];
  };

export type DescribeRoute = (endpoint: Endpoint, operationId: string, summary: string, fields: RouteFields) => RouteDescription;

const isNamed = (b: Named | NonNullable<RouteDescription['body']>): b is Named => 'name' in b;

/** Describes the routes of a group: `route('get /x/{id}', 'getX', 'An x', { responses: { 200: reply('The x.', schemas.x) } })`. */
export function routeGroup(defaults: RouteDefaults): DescribeRoute {
  return (endpoint, operationId, summary, { body, errors, ...fields }) => {
    const [method, path] = endpoint.split(' ') as [Method, string];
    const allErrors = { ...defaults.errors, ...errors };
    return {
      method,
      path,
      operationId,
      summary,
      tag: defaults.tag,
      auth: defaults.auth,
      ...fields,
      ...(body ? { body: isNamed(body) ? { schema: body } : body } : {}),
      ...(Object.keys(allErrors).length ? { errors: allErrors } : {}),
    };
  };
}

/** The routes of one group, described with what they share: `routesOf({ tag, auth }, (route) => [route(…), …])`. */
export const routesOf = (defaults: RouteDefaults, describe: (route: DescribeRoute) => RouteDescription[]): RouteDescription[] => describe(routeGroup(defaults));

/** A success answer: its description and, when it has one, its body. */
export const reply = (description: string, body?: ResponseDescription['body']): ResponseDescription => ({ description, ...(body ? { body } : {}) });

/** A JSON body the route also takes absent (nothing, or {}). */
export const optionalBody = (schema: Named): RouteDescription['body'] => ({ schema, required: false });

/** The tags of an API, by name: `{ name: description }` in the order given. */
export const tagsOf = (tags: Record<string, string>): { name: string; description: string }[] =>
  Object.entries(tags).map(([name, description]) => ({ name, description }));
