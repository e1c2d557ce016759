import type { z } from 'zod';

/**
 * The kinds a program registered in code (src/extensions), as the config check needs them: names and the
 * schemas of their options. `Extensions` (src/extensions/extensions.ts) is one of these.
 */
export interface ConfigExtensions {
  readonly effects?: readonly { readonly kind: string; readonly options: z.ZodType }[];
  readonly coordinators?: readonly { readonly kind: string; readonly options: z.ZodType }[];
  readonly stopConditions?: readonly { readonly name: string; readonly options: z.ZodType }[];
  /** Middleware, named in agents' `middleware` (their options schema absent: no options). */
  readonly middleware?: readonly { readonly name: string; readonly options?: z.ZodType | undefined }[];
  /** Contract rule kinds, named in contracts' `schema.rules` as `{kind, field?, params?}`. */
  readonly contractRules?: readonly { readonly kind: string; readonly options?: z.ZodType | undefined }[];
}

let current: ConfigExtensions = {};

/**
 * Runs `parse` (a synchronous zod parse of a config) with `extensions` as the kinds the schemas accept besides
 * the built-ins. zod has no parse context, so the schemas read the kinds of the parse running now from here;
 * a parse is synchronous, so no other parse sees them.
 */
export function parsingWith<T>(extensions: ConfigExtensions | undefined, parse: () => T): T {
  const previous = current;
  current = extensions ?? {};
  try {
    return parse();
  } finally {
    current = previous;
  }
}

/** The registered kinds of the parse running now (none outside parsingWith). */
export function registeredKinds(): ConfigExtensions {
  return current;
}
