// Preloaded (node --enable-source-maps --import) into a process profiled with --cpu-prof: tsx compiles each
// .ts file to one line of JavaScript, so a profile's line and column numbers are the compiled file's. At
// exit this writes the source map of every loaded .ts file of the checkout (src/, bench/) to
// $BENCH_SOURCE_MAPS_OUT, keyed by file URL, so bench/support/cpuprofile-summary.ts can name source lines.
import { readdirSync, writeFileSync } from 'node:fs';
import { findSourceMap } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const out = process.env.BENCH_SOURCE_MAPS_OUT;

function tsFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

if (out)
  process.on('exit', () => {
    const maps = {};
    for (const file of ['src', 'bench'].flatMap((d) => tsFiles(join(root, d)))) {
      const url = pathToFileURL(file).href;
      const map = findSourceMap(url);
      if (map) maps[url] = { ...map.payload, sourcesContent: undefined };
    }
    writeFileSync(out, JSON.stringify(maps));
  });
