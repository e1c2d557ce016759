#!/usr/bin/env node
// `ratchet`: runs src/cli/main.ts through tsx's loader, registered here so it resolves from this package
// whatever the working directory is (one process: Ctrl-C and exit codes need no forwarding).
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
