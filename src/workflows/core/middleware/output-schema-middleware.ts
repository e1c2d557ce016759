import type { z } from 'zod';
import type { JsonSchemaSubset, OutputGuardrailConfig } from '../../../config/index.js';
import { defineMiddleware } from '../../../extensions/index.js';
import { checkedAnswer } from './answer-check.js';

/** The options of the answer check `options.output_schema` makes (not listed in configs: the option is). */
export interface OutputSchemaCheck {
  json_schema: JsonSchemaSubset;
  max_retries: number;
}

/**
 * The check of `options.output_schema`: a final answer that is not one JSON object matching the schema goes
 * back with the errors, `max_retries` times a run (`options.output_schema_retries`). Not a kind the config
 * lists: the option also asks the provider for structured output and tells the model the schema.
 */
export const outputSchemaMiddleware = defineMiddleware<z.ZodType<OutputSchemaCheck>>({
  name: 'output_schema',
  async aroundModelCall(call, next) {
    const { json_schema, max_retries } = call.options;
    const reply = await next(call.request);
    const config = schemaChecks.get(call.options) ?? {
      deny: [],
      allow: [],
      json_schema,
      on_fail: 'retry' as const,
      max_retries,
    };
    schemaChecks.set(call.options, config);
    return checkedAnswer(reply, config, 'options.output_schema', max_retries);
  },
});
const schemaChecks = new WeakMap<object, OutputGuardrailConfig>();
