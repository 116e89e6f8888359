// The layering of src/ (issue 22): no module imports from a layer above its own in src/layers.ts, no two folders
// of one layer import each other round in a circle, and every folder and top-level file of src/ is in a layer.
// The checker (./layer-check.ts) is shown failing on small trees of its own first, so the real tree is never touched.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LAYERS } from '../../src/layers.ts';
import { checkLayers, type SourceFile, specifiersOf } from './layer-check.ts';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

/** Three layers, lowest first, for the small trees below. */
const TABLE = [
  { name: 'base', members: ['clock', 'store'] },
  { name: 'middle', members: ['inbox', 'status'] },
  { name: 'top', members: ['runtime'] },
];
const ENTRIES = ['clock', 'store', 'inbox', 'status', 'runtime'];
const file = (path: string, ...lines: string[]): SourceFile => ({ path, text: lines.join('\n') });

describe('the layer checker, on small trees', () => {
  it('passes imports downwards, within a layer and within a folder', () => {
    const files = [
      file('runtime/start.ts', "import { inbox } from '../inbox/inbox.ts';", "import { now } from '../clock.ts';"),
      file('inbox/inbox.ts', "import type { Status } from '../status/status.ts';", "import { write } from '../store/write.ts';"),
      file('store/write.ts', "import { now } from '../clock.ts';", "import { sql } from './sql/index.ts';"),
      file('store/sql/index.ts', "import { write } from '../write.ts';", "import { z } from 'zod';", "import { readFileSync } from 'node:fs';"),
    ];
    expect(checkLayers(TABLE, ENTRIES, files)).toEqual([]);
  });

  it('fails on an import from a lower layer to a higher one, naming the file, the import and both layers', () => {
    const files = [file('store/intake.ts', "import { parse } from '../inbox/parse.ts';")];
    expect(checkLayers(TABLE, ENTRIES, files)).toEqual([
      "src/store/intake.ts imports '../inbox/parse.ts': store (layer 1, base) may not import from inbox (layer 2, middle), a higher layer",
    ]);
  });

  it('counts type-only imports, re-exports, import() calls and import() types, and a top-level file as a unit', () => {
    const upward = [
      "import type { Start } from './runtime/start.ts';",
      "export { inbox } from './inbox/inbox.ts';",
      "export type * from './status/status.ts';",
      "const later = () => import('./runtime/later.ts');",
      "let t: typeof import('./inbox/types.ts').T;",
      "import './runtime/side-effect.ts';",
    ];
    const problems = checkLayers(TABLE, ENTRIES, [file('clock.ts', ...upward)]);
    expect(problems).toHaveLength(upward.length);
    for (const [i, line] of upward.entries()) expect(problems[i]).toContain(`src/clock.ts imports '${/'(\.[^']+)'/.exec(line)![1]}': clock (layer 1, base)`);
  });

  it('reads specifiers from the syntax, not from comments or strings', () => {
    const text = [
      "// import { x } from '../runtime/start.ts';",
      'const s = "import(\'../runtime/start.ts\')";',
      "import {\n  a,\n  b,\n} from './multi.ts';",
    ].join('\n');
    expect(specifiersOf('clock.ts', text)).toEqual(['./multi.ts']);
  });

  it('fails on a circle between two folders of one layer', () => {
    const files = [file('inbox/inbox.ts', "import { s } from '../status/status.ts';"), file('status/status.ts', "import type { I } from '../inbox/inbox.ts';")];
    expect(checkLayers(TABLE, ENTRIES, files)).toEqual([
      "a circle between inbox, status (layer middle): src/inbox/inbox.ts imports '../status/status.ts'; src/status/status.ts imports '../inbox/inbox.ts'",
    ]);
  });

  it('fails on a folder or top-level file in no layer, and on a table naming something twice or something missing', () => {
    expect(checkLayers(TABLE, [...ENTRIES, 'parser', 'paths'], [])).toEqual([
      'src/parser is in no layer: place it in src/layers.ts',
      'src/paths is in no layer: place it in src/layers.ts',
    ]);
    const table = [...TABLE, { name: 'extra', members: ['clock', 'gone'] }];
    expect(checkLayers(table, ENTRIES, [])).toEqual([
      'clock is in two layers: base and extra',
      'layer extra names gone, which is not a folder or top-level file of src/',
    ]);
  });
});

describe('the layers of src/ (src/layers.ts)', () => {
  it('hold every folder and top-level file of src/, and no import goes up a layer or round a circle', () => {
    const entries = readdirSync(SRC, { withFileTypes: true }).map((e) => (e.isDirectory() ? e.name : e.name.replace(/\.[^.]+$/, '')));
    const files = readdirSync(SRC, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith('.ts'))
      .map((e) => {
        const full = join(e.parentPath, e.name);
        return { path: relative(SRC, full).split(sep).join('/'), text: readFileSync(full, 'utf8') };
      });
    expect(files.length).toBeGreaterThan(100);
    expect(checkLayers(LAYERS, entries, files)).toEqual([]);
  });
});
