// `npm run demo [-- "task"] [--config F]`: `ratchet run` on the demo config, in one process (no API key).
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { packageRoot } from './cli-config.js';
import { runCli } from './run-cli.js';

const demoTask = 'What is 17 × 23 + 5? And how many words are in our motto?';

const { values, positionals } = parseArgs({
  args: process.argv.slice(2),
  options: { config: { type: 'string', short: 'c', default: resolve(packageRoot, 'config/demo.yaml') } },
  allowPositionals: true,
});
await runCli(['run', '--config', values.config, '--', positionals.join(' ') || demoTask]);
