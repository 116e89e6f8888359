// The checker behind layers.test.ts: reads the relative imports of source files (given as text, so a test can
// hand it a small tree of its own) and says what breaks a layer table (src/layers.ts): an import from a lower
// layer to a higher one, a circle between folders of one layer, a folder or top-level file in no layer, and a
// table naming something twice or something that is not there.
import { posix } from 'node:path';
import ts from 'typescript';
import type { Layer } from '../../src/layers.ts';

export interface SourceFile {
  /** Relative to src/, with `/`: `storage/index.ts`, `clock.ts`. */
  path: string;
  text: string;
}

/**
 * Every module `text` names: `import … from`, `import '…'`, `export … from`, `import('…')` calls and
 * `import('…')` types, type-only ones included.
 */
export function specifiersOf(path: string, text: string): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier))
      found.push(node.moduleSpecifier.text);
    else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    )
      found.push(node.arguments[0].text);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal))
      found.push(node.argument.literal.text);
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS));
  return found;
}

/** The folder or top-level file (without its extension) of src/ that a path under src/ belongs to. */
export function unitOf(path: string): string {
  const [first, ...rest] = path.split('/');
  return rest.length > 0 ? first! : first!.replace(/\.[^.]+$/, '');
}

/** Where a relative import of `from` lands, relative to src/; undefined when it is not relative or leaves src/. */
function target(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return undefined;
  const resolved = posix.normalize(posix.join(posix.dirname(from), specifier));
  return resolved.startsWith('../') ? undefined : resolved;
}

interface Edge {
  from: string;
  to: string;
  file: string;
  specifier: string;
}

/** The circles among `units` (each one a strongly connected set of more than one), by Tarjan's algorithm. */
function circles(units: string[], edges: Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (u: string): void => {
    index.set(u, index.size);
    low.set(u, index.get(u)!);
    stack.push(u);
    for (const v of next.get(u) ?? []) {
      if (!index.has(v)) {
        visit(v);
        low.set(u, Math.min(low.get(u)!, low.get(v)!));
      } else if (stack.includes(v)) low.set(u, Math.min(low.get(u)!, index.get(v)!));
    }
    if (low.get(u) !== index.get(u)) return;
    const set: string[] = [];
    let v: string;
    do {
      v = stack.pop()!;
      set.push(v);
    } while (v !== u);
    if (set.length > 1) found.push(set.sort());
  };
  for (const u of units) if (!index.has(u)) visit(u);
  return found;
}

/**
 * What breaks `layers` in `files`; empty when nothing does. `entries` are the folders and top-level files of
 * src/ (files without their extension), each of which must be in a layer.
 */
export function checkLayers(layers: readonly Layer[], entries: string[], files: SourceFile[]): string[] {
  const problems: string[] = [];
  const layerOf = new Map<string, number>();
  layers.forEach((layer, i) => {
    for (const m of layer.members) {
      if (layerOf.has(m)) problems.push(`${m} is in two layers: ${layers[layerOf.get(m)!]!.name} and ${layer.name}`);
      else layerOf.set(m, i);
      if (!entries.includes(m)) problems.push(`layer ${layer.name} names ${m}, which is not a folder or top-level file of src/`);
    }
  });
  for (const e of entries) if (!layerOf.has(e)) problems.push(`src/${e} is in no layer: place it in src/layers.ts`);

  const placed = (unit: string) => `${unit} (layer ${layerOf.get(unit)! + 1}, ${layers[layerOf.get(unit)!]!.name})`;
  const sameLayer: Edge[] = [];
  for (const file of files) {
    const from = unitOf(file.path);
    for (const specifier of specifiersOf(file.path, file.text)) {
      const landed = target(file.path, specifier);
      if (landed === undefined) continue;
      const to = unitOf(landed);
      // Imports inside one folder are always allowed; a unit in no layer is reported above.
      if (to === from || !layerOf.has(from) || !layerOf.has(to)) continue;
      if (layerOf.get(to)! > layerOf.get(from)!)
        problems.push(`src/${file.path} imports '${specifier}': ${placed(from)} may not import from ${placed(to)}, a higher layer`);
      else if (layerOf.get(to) === layerOf.get(from)) sameLayer.push({ from, to, file: file.path, specifier });
    }
  }
  for (const set of circles([...new Set(sameLayer.map((e) => e.from))].sort(), sameLayer)) {
    const inside = sameLayer.filter((e) => set.includes(e.from) && set.includes(e.to));
    const examples = [...new Map(inside.map((e) => [`${e.from}>${e.to}`, `src/${e.file} imports '${e.specifier}'`])).values()];
    problems.push(`a circle between ${set.join(', ')} (layer ${layers[layerOf.get(set[0]!)!]!.name}): ${examples.join('; ')}`);
  }
  return problems;
}
