import { config } from 'zod';

// The client parses answers with zod, which probes for eval (new Function) to compile its object parsers when
// a schema is built; the console's CSP forbids eval, and the probe would be reported as a violation. This
// module is main.tsx's first import, so it runs before any schema module does: zod then parses without eval.
config({ jitless: true });
