import { timeoutMiddlewareSchema } from '../../../config/index.js';
import { RatchetError } from '../../../errors/index.js';
import { defineMiddleware, type ToolResult } from '../../../extensions/index.js';

/**
 * `timeout`: a time limit for each model call (`model_call_s`: aborted, then retried as `model_timeout`) and
 * each tool call (`tool_call_s`: aborted, and the model gets an error result saying so). The run's own
 * deadline (`options.timeout_s`) is the engine's: it also bounds steps that are not calls (waits for
 * children, for a person), which no middleware wraps.
 */
export const timeoutMiddleware = defineMiddleware({
  name: 'timeout',
  options: timeoutMiddlewareSchema,
  async aroundModelCall(call, next) {
    const seconds = call.options.model_call_s;
    if (seconds === undefined) return next(call.request);
    const limit = AbortSignal.timeout(seconds * 1_000);
    try {
      return await next(call.request, { signal: limit });
    } catch (error) {
      if (!limit.aborted || call.signal.aborted) throw error;
      throw new RatchetError(
        'model_timeout',
        `the model call took longer than ${seconds} s (middleware "timeout", model_call_s) and was aborted`,
      );
    }
  },
  async aroundToolCall(call, next) {
    const seconds = call.options.tool_call_s;
    if (seconds === undefined) return next(call.request);
    const limit = AbortSignal.timeout(seconds * 1_000);
    const timedOut: ToolResult = {
      content:
        `the call of tool "${call.request.name}" took longer than ${seconds} s (middleware "timeout", ` +
        'tool_call_s) and was stopped',
      isError: true,
    };
    // A handler that does not honour its signal is not waited for past the limit.
    let onExpiry = () => {};
    const expired = new Promise<ToolResult>((resolve) => {
      onExpiry = () => resolve(timedOut);
      limit.addEventListener('abort', onExpiry, { once: true });
    });
    try {
      return await Promise.race([next(call.request, { signal: limit }), expired]);
    } catch (error) {
      if (!limit.aborted || call.signal.aborted) throw error;
      return timedOut;
    } finally {
      limit.removeEventListener('abort', onExpiry);
    }
  },
});
