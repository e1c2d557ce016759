// The `ratchet` command: bin/ratchet.mjs runs this file compiled (dist/cli/main.js), or through tsx from source.
import { runCli } from './run-cli.js';

await runCli(process.argv.slice(2));
