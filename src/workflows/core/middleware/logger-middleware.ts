import { loggerMiddlewareSchema } from '../../../config/index.js';
import { defineMiddleware } from '../../../extensions/index.js';

/**
 * `logger`: a log line for each model call and each tool call (provider, model, tokens, duration; the tool,
 * whether its result is an error, its length), at `level`, and a warning for a call that fails. No content:
 * prompts, replies and arguments may hold what the logs must not.
 */
export const loggerMiddleware = defineMiddleware({
  name: 'logger',
  options: loggerMiddlewareSchema,
  async aroundModelCall(call, next) {
    const started = performance.now();
    try {
      const reply = await next(call.request);
      call.logger[call.options.level](
        {
          provider: reply.provider,
          model: reply.model,
          input_tokens: reply.usage.input_tokens,
          output_tokens: reply.usage.output_tokens,
          tool_calls: reply.parts.filter((part) => part.type === 'tool_call').length,
          duration_ms: Math.round(performance.now() - started),
        },
        'model call finished',
      );
      return reply;
    } catch (error) {
      call.logger.warn(
        { err: error, provider: call.request.provider, duration_ms: Math.round(performance.now() - started) },
        'model call failed',
      );
      throw error;
    }
  },
  async aroundToolCall(call, next) {
    const started = performance.now();
    try {
      const result = await next(call.request);
      call.logger[call.options.level](
        {
          tool: call.request.name,
          tool_call_id: call.request.toolCallId,
          is_error: result.isError,
          result_chars: result.content.length,
          duration_ms: Math.round(performance.now() - started),
        },
        'tool call finished',
      );
      return result;
    } catch (error) {
      call.logger.warn(
        { err: error, tool: call.request.name, duration_ms: Math.round(performance.now() - started) },
        'tool call failed',
      );
      throw error;
    }
  },
});
