// The container image, checked without a container engine: the Dockerfile copies only what the build context
// holds; the image's command, run with the image's environment and only the image's files, answers /readyz
// with the demo reachable from outside, and takes the documented backup; its HEALTHCHECK tells up from down;
// it runs as a non-root user who owns /data; and every doc that names a container data path names /data.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, startChild, type Child } from '../../bench/support/child.ts';
import { all, copyTargets, envOf, execForm, healthcheckOf, ignoredBy, lastOf, parseDockerfile, type CopyTarget, type Stage } from '../support/dockerfile.ts';
import { waitFor } from '../support/wait.ts';

const stages = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
const image = stages.at(-1)!;
const imageEnv = envOf(image);
const workdir = posix.resolve('/', lastOf(image, 'WORKDIR') ?? '/');

/** The repository path a COPY brings into the image; node_modules is what `npm ci` made in the build stage. */
function repoPathOf(copy: CopyTarget): string {
  if (!copy.from) return posix.normalize(copy.source);
  const stage = stages.find((s) => s.name === copy.from);
  if (!stage) throw new Error(`COPY --from=${copy.from}: no such stage`);
  const wanted = posix.normalize(copy.source);
  const hit = copyTargets(stage).find((c) => !c.from && c.target === wanted);
  if (hit) return posix.normalize(hit.source);
  if (posix.basename(wanted) === 'node_modules' && all(stage, 'RUN').some((r) => /\bnpm ci\b/.test(r))) return 'node_modules';
  throw new Error(`COPY --from=${copy.from} ${copy.source}: nothing in that stage puts it there`);
}

/** The image's files under WORKDIR, in a temporary folder: copies of the repository's, node_modules linked. */
function imageLayout(into: string): void {
  for (const copy of copyTargets(image)) {
    const rel = posix.relative(workdir, copy.target);
    if (rel.startsWith('..')) throw new Error(`${copy.target} is outside WORKDIR ${workdir}`);
    const source = repoPathOf(copy);
    const dest = join(into, rel);
    mkdirSync(dirname(dest), { recursive: true });
    if (source === 'node_modules') symlinkSync(join(ROOT, 'node_modules'), dest, 'dir');
    else cpSync(join(ROOT, source), dest, { recursive: true });
  }
}

/** The image's environment and nothing of this test process's, with a data folder and port of our own. */
function runEnv(settings: Record<string, string>): Record<string, string | undefined> {
  const none = Object.fromEntries(Object.keys(process.env).map((k) => [k, undefined]));
  return { ...none, PATH: process.env.PATH, HOME: process.env.HOME, ...imageEnv, ...settings };
}

/** Every package that src/ and bin/ import at run time (type-only imports are erased). */
function importedPackages(): Set<string> {
  const files = [
    ...readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => join(ROOT, 'src', f)),
    ...readdirSync(join(ROOT, 'bin'))
      .filter((f) => f.endsWith('.js'))
      .map((f) => join(ROOT, 'bin', f)),
  ];
  const found = new Set<string>();
  const specifiers = /^\s*(?:import|export)(?!\s+type\b)[^'";]*?from\s+['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s+['"]([^'"]+)['"]/gm;
  for (const file of files) {
    for (const m of readFileSync(file, 'utf8').matchAll(specifiers)) {
      const spec = (m[1] ?? m[2] ?? m[3])!;
      if (spec.startsWith('.') || spec.startsWith('node:') || builtinModules.includes(spec.split('/')[0]!)) continue;
      found.add(
        spec
          .split('/')
          .slice(0, spec.startsWith('@') ? 2 : 1)
          .join('/'),
      );
    }
  }
  return found;
}

/**
 * Container-side data paths a doc names: targets of data volumes, and on lines about containers, absolute
 * DATA_DIRs and data folders under /srv, /opt, /var/lib; /app/… data anywhere (/app is the image's WORKDIR).
 * A host's own DATA_DIR (a systemd unit's /var/lib/…) is not a container path.
 */
function containerDataPaths(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/(?:\s-v|--volume)[ =]([^\s:`'"]+):(\/[^\s:`'"]*)/g)) if (/data/i.test(m[1]!)) found.push(m[2]!);
  for (const m of text.matchAll(/\b(?:target|destination|dst)=(\/[^\s,`'"]+)/g)) found.push(m[1]!);
  for (const m of text.matchAll(/(?<![\w.$~-])\/app\/[\w./-]*data\b[\w./-]*/g)) found.push(m[0]);
  for (const line of text.split('\n').filter((l) => /docker|podman|container|image/i.test(l))) {
    for (const m of line.matchAll(/\bDATA_DIR=(\/[^\s`'"]*)/g)) found.push(m[1]!);
    for (const m of line.matchAll(/(?<![\w.$~-])\/(?:srv|opt|var\/lib|home\/node)\/[\w./-]*data\b[\w./-]*/g)) found.push(m[0]);
  }
  return found;
}

describe('the Dockerfile', () => {
  it('copies only paths the build context holds (present in the repository, not excluded by .dockerignore)', () => {
    const ignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    const fromContext = stages.flatMap((s: Stage) => copyTargets(s)).filter((c) => !c.from);
    expect(fromContext.length).toBeGreaterThan(0);
    for (const { source } of fromContext) {
      expect(existsSync(join(ROOT, source)), `${source} is missing`).toBe(true);
      expect(ignoredBy(ignore, posix.normalize(source)), `${source} is excluded by .dockerignore`).toBe(false);
    }
    // What the image takes from the build stage was put there (throws naming the copy otherwise).
    expect(copyTargets(image).map(repoPathOf)).toEqual(expect.arrayContaining(['node_modules', 'bin', 'src', 'db']));
  });

  it('runs as a non-root user who owns the /data volume, DATA_DIR=/data, and exposes the three demo ports', () => {
    const user = lastOf(image, 'USER')?.trim().split(':')[0];
    expect(user).toBeDefined();
    expect(['root', '0']).not.toContain(user);
    expect(imageEnv.DATA_DIR).toBe('/data');
    expect(all(image, 'VOLUME').flatMap((v) => (v.trim().startsWith('[') ? (JSON.parse(v) as string[]) : v.trim().split(/\s+/)))).toContain('/data');
    expect(all(image, 'RUN').some((r) => new RegExp(`chown\\s+(-\\S+\\s+)*${user}(:\\S+)?\\s+(\\S+\\s+)*/data\\b`).test(r))).toBe(true);
    const port = Number(imageEnv.PORT ?? 3000);
    const exposed = all(image, 'EXPOSE')
      .join(' ')
      .split(/\s+/)
      .map((p) => Number(p.split('/')[0]));
    expect(exposed).toEqual(expect.arrayContaining([port, port + 1, port + 2]));
    // The image's default command is the zero-configuration demo, which production mode refuses.
    expect(imageEnv.NODE_ENV).not.toBe('production');
    expect(imageEnv.HOST).toBe('0.0.0.0');
  });

  it('leaves out nothing the code needs at run time: every package src/ and bin/ import is a production dependency', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const imported = [...importedPackages()];
    expect(imported).toEqual(expect.arrayContaining(['tsx', 'better-sqlite3']));
    expect(imported.filter((p) => !(p in pkg.dependencies))).toEqual([]);
  });

  it('names one container data path, /data, in README.md and every doc under docs/', () => {
    const docs = [
      'README.md',
      ...readdirSync(join(ROOT, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ];
    const named = docs.flatMap((doc) => containerDataPaths(readFileSync(join(ROOT, doc), 'utf8')).map((path) => ({ doc, path })));
    expect(named.filter((n) => n.doc === 'README.md').length).toBeGreaterThan(0);
    expect(named.filter((n) => n.path !== '/data' && !n.path.startsWith('/data/'))).toEqual([]);
  });
});

describe('the image command, with the image environment and only the image files', () => {
  let app: string;
  let data: string;
  let child: Child | undefined;
  let env: Record<string, string | undefined>;
  beforeAll(async () => {
    app = mkdtempSync(join(tmpdir(), 'emr-bridge-image-'));
    data = mkdtempSync(join(tmpdir(), 'emr-bridge-image-data-'));
    imageLayout(app);
    // PORT=0: a free port, and free ones for the simulator and FHIR server; HOST stays the image's.
    env = runEnv({ DATA_DIR: data, PORT: '0' });
    const cmd = execForm(lastOf(image, 'CMD')!);
    expect(cmd[0]).toBe('node');
    child = await startChild(cmd.slice(1), { env, cwd: app, timeoutMs: 40_000 });
  }, 60_000);
  afterAll(async () => {
    await child?.stop();
    rmSync(app, { recursive: true, force: true });
    rmSync(data, { recursive: true, force: true });
  });

  it('answers /readyz 200, with the adapter, simulator and FHIR server reachable beyond loopback (HOST=0.0.0.0)', async () => {
    const ready = await waitFor(async () => ((await fetch(`${child!.url}/readyz`)).status === 200 ? true : undefined), 20_000);
    expect(ready).toBe(true);
    const banner = await waitFor(() => {
      const out = child!.output();
      const service = /^\s+service\s+(http:\/\/\S+)/m.exec(out)?.[1];
      const fhir = /^\s+FHIR R4 EMR\s+(http:\/\/\S+)/m.exec(out)?.[1];
      return service && fhir ? { service, fhir } : undefined;
    });
    // 127.0.0.2 is another local address: only a wildcard bind answers on it, a 127.0.0.1 one refuses.
    const elsewhere = (url: string) => url.replace('//127.0.0.1:', '//127.0.0.2:');
    expect((await fetch(elsewhere(`${child!.url}/healthz`))).status).toBe(200);
    expect((await fetch(elsewhere(`${banner.fhir}/metadata`))).status).toBe(200);
    expect((await fetch(elsewhere(`${banner.service}/`))).status).toBeGreaterThanOrEqual(200);
    expect(existsSync(join(data, 'emr-bridge.db'))).toBe(true);
  });

  it('takes the documented backup, `npx emr-bridge backup`, while it runs, into DATA_DIR/backups', async () => {
    const { stdout } = await promisify(execFile)('npx', ['--no-install', 'emr-bridge', 'backup'], { cwd: app, env, timeout: 30_000 });
    const path = stdout.trim().split('\n').at(-1)!;
    expect(dirname(path)).toBe(join(data, 'backups'));
    expect(existsSync(path)).toBe(true);
  });

  it('passes its HEALTHCHECK while the adapter runs, and fails it once the adapter is gone', async () => {
    const check = healthcheckOf(image);
    expect(check).toBeDefined();
    const port = new URL(child!.url).port;
    const run = () =>
      promisify(execFile)(check![0]!, check!.slice(1), { cwd: app, env: { ...env, PORT: port }, timeout: 10_000 }).then(
        () => 0,
        (err: { code?: number }) => err.code ?? 1,
      );
    expect(await run()).toBe(0);
    await child!.stop();
    expect(await run()).not.toBe(0);
  });
});
