// The `ratchet` command: bin/ratchet.mjs runs this file compiled (dist/cli/main.js), or through tsx from source;
// `node dist/cli/main.js api` (the container's API) runs it directly. An unsupported Node.js is refused with
// one line before the CLI loads (a static import would load it first).
import { refuseUnsupportedNode } from '../worker/node-version.js';

refuseUnsupportedNode();
const { runCli } = await import('./run-cli.js');
await runCli(process.argv.slice(2));
