// The OpenAPI documents docs/openapi/ holds, one per API (`npm run schemas` writes them; a test checks
// they are current). The adapter serves the first at /openapi.json; the simulator the other two in one.
import { join } from 'node:path';
import { buildOpenApi, type OpenApiDocument } from '../openapi/build.ts';
import { PACKAGE_ROOT } from '../paths.ts';
import { simulatorControlApi } from '../simulator/openapi/control.ts';
import { simulatorIntegrationApi } from '../simulator/openapi/integration.ts';
import { adminApi } from './admin.ts';

export const OPENAPI_DIR = join(PACKAGE_ROOT, 'docs', 'openapi');

/** docs/openapi/<file name> → its document. */
export function openApiDocuments(): Record<string, OpenApiDocument> {
  return {
    'admin.json': buildOpenApi(adminApi),
    'simulator-integration.json': buildOpenApi(simulatorIntegrationApi),
    'simulator-control.json': buildOpenApi(simulatorControlApi),
  };
}
