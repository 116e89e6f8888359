// Stops a start on a Node.js older than the project's own (Node 24, from the npm registry's `node` package),
// before anything else loads: `node bin/emr-bridge.js` run with the machine's Node 20 would otherwise fail
// later, on a native module or a newer API, with an error that names neither the cause nor the cure.
export const REQUIRED_NODE_MAJOR = 24;

/** The refusal for this Node.js version, or undefined when it is new enough. */
export function nodeVersionProblem(version = process.versions.node, execPath = process.execPath) {
  const major = Number(version.split('.')[0]);
  if (major >= REQUIRED_NODE_MAJOR) return undefined;
  return [
    `emr-bridge needs Node.js ${REQUIRED_NODE_MAJOR} or later; this is Node.js ${version} (${execPath}).`,
    `The project brings its own Node.js ${REQUIRED_NODE_MAJOR} with npm ci: run it through npm, which puts that one first,`,
    '  npm start            (or: npx emr-bridge <command>)',
  ].join('\n');
}

const problem = nodeVersionProblem();
if (problem) {
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}
