import { resolve } from 'node:path';
import { z } from 'zod';
import type { ProviderKind } from '../provider-registry.js';
import { loadScript } from './load-script.js';
import { isNonEmptyScript, scriptShape } from './script-schema.js';
import { createScriptedCompleter } from './scripted-completer.js';

/**
 * A provider entry's own fields: either `script` (a YAML or JSON file) or the script inline
 * (`replies`, `rules`, `default`), never both. Paths resolve against the config file's directory.
 */
export const scriptedFieldsSchema = z
  .strictObject({
    script: z.string().min(1).optional(),
    ...scriptShape,
    record_calls: z.string().min(1).optional(),
    /** The context window it pretends to have (tokens; default 0, unknown): effects with thresholds act on it. */
    context_window: z.number().int().nonnegative().optional(),
    /**
     * It pretends to support structured output: a request's response format (an agent's output_schema) is
     * recorded in the call log as `response_format`. Its replies stay what the script says.
     */
    structured_outputs: z.boolean().optional(),
  })
  .superRefine((fields, context) => {
    const inline = fields.replies !== undefined || fields.rules !== undefined || fields.default !== undefined;
    if (fields.script !== undefined && inline) {
      context.addIssue({
        code: 'custom',
        path: ['script'],
        message:
          'give either `script` (a file) or an inline script (`replies`, `rules`, `default`), not both',
      });
    } else if (fields.script === undefined && !inline) {
      context.addIssue({
        code: 'custom',
        message:
          'a scripted provider needs `script` (a YAML or JSON file) or an inline `replies`, `rules` or `default`',
      });
    } else if (inline && !isNonEmptyScript(fields)) {
      context.addIssue({
        code: 'custom',
        message: 'the inline script is empty: give `replies`, `rules` or a `default`',
      });
    }
  });

export type ScriptedProviderFields = z.infer<typeof scriptedFieldsSchema>;

export const scriptedProviderKind: ProviderKind<ScriptedProviderFields> = {
  fieldsSchema: scriptedFieldsSchema,
  create(config, { configDir }) {
    const script =
      config.script === undefined
        ? { replies: config.replies, rules: config.rules, default: config.default }
        : loadScript(resolve(configDir, config.script));
    const recordCallsTo =
      config.record_calls === undefined ? undefined : resolve(configDir, config.record_calls);
    return createScriptedCompleter(script, {
      recordCallsTo,
      structuredOutput: config.structured_outputs === true,
    });
  },
};
