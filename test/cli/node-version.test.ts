// The runtime the project pins: every test runs on Node 24 (the npm registry's `node` package, first on npm's
// PATH), and a start on an older Node stops at once with a message naming its version and the command that works.
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ESM file of bin/, typed by its JSDoc only.
import { nodeVersionProblem, REQUIRED_NODE_MAJOR } from '../../bin/require-node.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SYSTEM_NODE = '/usr/bin/node';

function versionOf(node: string): string | undefined {
  try {
    return execFileSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

describe('the Node.js version', () => {
  it('the tests themselves run on the pinned Node 24', () => {
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(REQUIRED_NODE_MAJOR);
    expect(process.execPath).toContain('node_modules');
  });

  it('accepts 24 and later, refuses 22 and 20 naming the version, the binary and npm start', () => {
    expect(nodeVersionProblem('24.0.0', '/x/node')).toBeUndefined();
    expect(nodeVersionProblem('26.1.0', '/x/node')).toBeUndefined();
    for (const old of ['22.18.0', '20.20.2']) {
      const problem = nodeVersionProblem(old, '/usr/bin/node');
      expect(problem).toContain(`this is Node.js ${old} (/usr/bin/node)`);
      expect(problem).toContain('npm start');
    }
  });

  // The machine's own Node (20 on this project's machines and CI) is what a user reaches with a bare `node`.
  const systemVersion = versionOf(SYSTEM_NODE);
  const systemIsOld = systemVersion !== undefined && Number(systemVersion.split('.')[0]) < REQUIRED_NODE_MAJOR;
  it.runIf(systemIsOld)(`\`node bin/emr-bridge.js serve\` with the machine's Node ${systemVersion} stops with the clear refusal`, () => {
    const run = spawnSync(SYSTEM_NODE, ['bin/emr-bridge.js', 'serve', '--port', '0'], { cwd: ROOT, encoding: 'utf8', timeout: 20_000 });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`emr-bridge needs Node.js ${REQUIRED_NODE_MAJOR} or later; this is Node.js ${systemVersion}`);
    expect(run.stderr).toContain('npm start');
  });
});
