// The layers of src/, lowest first: a module imports from its own layer and the layers below it, never from one
// above. Each layer names top-level folders of src/ and top-level files (without `.ts`); every one of them is in
// exactly one layer, so a new folder has to be placed here. test/architecture/layers.test.ts enforces it;
// docs/architecture.md#layers says what each layer holds.

export interface Layer {
  /** How the layering test names the layer. */
  name: string;
  /** Top-level folders of src/, and top-level files without `.ts`. */
  members: readonly string[];
}

export const LAYERS: readonly Layer[] = [
  {
    name: 'foundation',
    members: ['clock', 'errors', 'logger', 'paths', 'config-names', 'config-schema', 'config-secrets', 'actor', 'contract', 'signature', 'layers'],
  },
  { name: 'mechanisms', members: ['sqlite', 'migration-files', 'work', 'http', 'openapi', 'sealing', 'tracing'] },
  { name: 'storage', members: ['storage'] },
  { name: 'services', members: ['access', 'audit', 'inbox', 'status', 'metrics', 'service-client'] },
  { name: 'stand-ins', members: ['fhir-server', 'hl7-emr', 'simulator', 'replay'] },
  { name: 'emr', members: ['emr'] },
  { name: 'config', members: ['config'] },
  { name: 'parts', members: ['app', 'receiver', 'mappings', 'crosswalk', 'processor', 'pusher'] },
  { name: 'views', members: ['console', 'api-docs'] },
  { name: 'runtime', members: ['runtime'] },
  { name: 'cli', members: ['cli'] },
];
