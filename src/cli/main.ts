// The `ratchet` command: bin/ratchet.mjs runs this file through tsx (`node dist/cli/main.js` once built).
import { runCli } from './run-cli.js';

await runCli(process.argv.slice(2));
