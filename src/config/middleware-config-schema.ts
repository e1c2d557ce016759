import { z } from 'zod';
import { builtinMiddlewareOptions } from './builtin-middleware-options.js';
import { registeredKinds } from './config-extensions.js';
import { parseOptions, readKindEntry } from './kind-entry.js';

/** One entry of an agent's `middleware`: the kind (a registered middleware's name) and its parsed options. */
export interface MiddlewareConfig {
  kind: string;
  options: unknown;
}

/**
 * One entry of an agent's `middleware`: `{kind, ...options}`. The kinds are the built-ins (output_guardrail,
 * timeout, logger, recovery) and the middleware registered in code (`extensions.middleware`): an unknown kind
 * is reported at `kind` with a hint and the known kinds; the options are checked by the middleware's own
 * schema, each problem at its path.
 */
export const middlewareConfigSchema = z.transform((input: unknown, context): MiddlewareConfig => {
  const registered = registeredKinds().middleware ?? [];
  const entry = readKindEntry(input, context, {
    noun: 'middleware',
    shape: '{kind, ...options}',
    known: [...builtinMiddlewareOptions.keys(), ...registered.map((middleware) => middleware.name)],
    schemaOf: (kind) =>
      builtinMiddlewareOptions.get(kind) ??
      (() => {
        const definition = registered.find((middleware) => middleware.name === kind);
        return definition ? (definition.options ?? z.strictObject({})) : undefined;
      })(),
  });
  if (!entry) return input as MiddlewareConfig;
  const parsed = parseOptions(entry.schema, entry.rest, [], ['kind']);
  for (const issue of parsed.issues) context.addIssue(issue);
  return parsed.issues.length > 0 ? (input as MiddlewareConfig) : { kind: entry.kind, options: parsed.value };
});
