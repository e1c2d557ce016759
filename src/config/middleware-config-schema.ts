import { z } from 'zod';
import { builtinMiddlewareOptions } from './builtin-middleware-options.js';
import { registeredKinds } from './config-extensions.js';
import { allowedKeys, configErrorMap, describeValue, unknownKeyMessage } from './config-issues.js';
import { didYouMean } from './suggest.js';

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
  const known = [...builtinMiddlewareOptions.keys(), ...registered.map((middleware) => middleware.name)];
  const knownList = `known kinds: ${known.join(', ')}`;
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    context.addIssue({
      code: 'custom',
      path: [],
      message: `expected a mapping {kind, ...options}, got ${describeValue(input)}`,
    });
    return input as MiddlewareConfig;
  }
  const { kind, ...options } = input as Record<string, unknown>;
  if (typeof kind !== 'string' || kind === '') {
    context.addIssue({
      code: 'custom',
      path: ['kind'],
      message: `expected a middleware kind (${knownList})`,
    });
    return input as MiddlewareConfig;
  }
  const builtin = builtinMiddlewareOptions.get(kind);
  const definition = builtin
    ? { options: builtin }
    : registered.find((middleware) => middleware.name === kind);
  if (!definition) {
    context.addIssue({
      code: 'custom',
      path: ['kind'],
      message: `unknown middleware kind "${kind}"${didYouMean(kind, known)}; ${knownList}`,
    });
    return input as MiddlewareConfig;
  }
  const schema = definition.options ?? z.strictObject({});
  const parsed = schema.safeParse(options, { error: configErrorMap });
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys) {
          context.addIssue({
            code: 'custom',
            path: [...issue.path, key],
            message: unknownKeyMessage(key, ['kind', ...allowedKeys(schema)]),
          });
        }
      } else {
        context.addIssue({ code: 'custom', path: [...issue.path], message: issue.message });
      }
    }
    return input as MiddlewareConfig;
  }
  return { kind, options: parsed.data };
});
