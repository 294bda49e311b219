// The Node the service supports (package.json engines; the version CI tests, .nvmrc): checked by each entry point before
// anything else loads, so an older Node stops with one line instead of crashing in a native module (better-sqlite3).
// Imports nothing, so that it loads on any Node.

/** package.json `engines.node` is `>=` this; test/unit/node-floor.test.ts holds the two and .nvmrc equal. */
export const NODE_FLOOR = '24.21.0';

const parts = (v: string): number[] => v.replace(/^v/, '').split('.').map((p) => Number.parseInt(p, 10) || 0);

/** The one line refusing `version` (as in process.versions.node), or null when it is the floor or later. */
export function nodeFloorRefusal(version: string): string | null {
  const have = parts(version);
  const need = parts(NODE_FLOOR);
  for (let i = 0; i < 3; i++) {
    if ((have[i] ?? 0) > need[i]) return null;
    if ((have[i] ?? 0) < need[i]) {
      return `this service needs Node ${NODE_FLOOR} or later (package.json engines), not ${version.replace(/^v?/, 'v')}: 'make install' fetches the pinned one (.nvmrc) into .node/, which 'make run' and 'npm start' use`;
    }
  }
  return null;
}

/** Exit 1 with that line on stderr when this Node is older than the floor. */
export function exitBelowNodeFloor(): void {
  const refusal = nodeFloorRefusal(process.versions.node);
  if (refusal === null) return;
  process.stderr.write(`${refusal}\n`);
  process.exit(1);
}
