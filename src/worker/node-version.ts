// Imports nothing, and uses nothing a Node.js of the last ten years lacks: every entry point (the worker, the
// CLI and so the API, a test worker) runs this first, on whatever Node started it, and loads the rest only
// once it passed. On an older Node the rest fails in ways that do not say why (a missing API deep in a
// dependency), after npm has printed a screenful of EBADENGINE warnings.
// bin/ratchet.mjs repeats the check in plain JavaScript (it must run before TypeScript can be loaded); the
// two print the same line (test/cli/node-version.int.test.ts runs both on an old Node).

/**
 * The Node.js versions Ratchet runs on: the maintained LTS lines, 22 and 24, and the lines after them.
 * 22 from 22.18: OpenTelemetry's packages need 22.15, and 22.18 strips TypeScript's types by default, which
 * `ratchet/testing` relies on to load a user's test worker module written in TypeScript.
 * package.json's `engines.node` says the same (a test keeps them in step).
 */
export const supportedNode = {
  engines: '^22.18.0 || >=24',
  lines: 'Node.js 22 (22.18 or later) or 24 and later',
} as const;

/** Why this version of Node.js (`process.versions.node`, e.g. "20.19.5") cannot run Ratchet, if it cannot. */
export function unsupportedNodeMessage(version: string): string | undefined {
  const [major = 0, minor = 0] = version.split('.').map((part) => Number.parseInt(part, 10) || 0);
  if (major >= 24 || (major === 22 && minor >= 18)) return undefined;
  return (
    `Node.js ${version} is not supported: Ratchet runs on ${supportedNode.lines}, the maintained LTS lines. ` +
    'Install one with your version manager (e.g. `nvm install 24`) or from https://nodejs.org/en/download'
  );
}

/** Ends the process with one line on stderr (exit 1) when this Node.js cannot run Ratchet. */
export function refuseUnsupportedNode(): void {
  const message = unsupportedNodeMessage(process.versions.node);
  if (message === undefined) return;
  process.stderr.write(`ratchet: ${message}\n`);
  process.exit(1);
}
