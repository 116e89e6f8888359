// What the simulator serves at /openapi.json: its integration API and its control API in one document
// (docs/openapi/ holds them apart).
import { buildOpenApi, type OpenApiDocument } from '../../openapi/build.ts';
import type { ApiDescription } from '../../openapi/describe.ts';
import { simulatorControlApi } from './control.ts';
import { simulatorIntegrationApi } from './integration.ts';

export function simulatorOpenApi(): OpenApiDocument {
  const both: ApiDescription = {
    title: 'emr-bridge simulator',
    description: `${simulatorIntegrationApi.description}\n\n${simulatorControlApi.description}`,
    ...(simulatorIntegrationApi.bearer ? { bearer: simulatorIntegrationApi.bearer } : {}),
    tags: [
      ...simulatorIntegrationApi.tags.map((t) => ({ ...t, name: `integration: ${t.name}` })),
      ...simulatorControlApi.tags.map((t) => ({ ...t, name: `control: ${t.name}` })),
    ],
    routes: [
      ...simulatorIntegrationApi.routes.map((r) => ({ ...r, tag: `integration: ${r.tag}`, operationId: `integration.${r.operationId}` })),
      ...simulatorControlApi.routes.map((r) => ({ ...r, tag: `control: ${r.tag}`, operationId: `control.${r.operationId}` })),
    ],
  };
  return buildOpenApi(both);
}
