import { defineMiddleware } from '../../../extensions/index.js';
import { redactSecrets } from '../../../secrets/index.js';
import { isStepControl } from '../../../tools/index.js';

/**
 * `recovery`: a tool call that throws inside it (a middleware listed after it, or a framework error around
 * the handler) gives the model an error result with the message instead of failing the step. A cancelled
 * run, a lost lock, a shutdown and a handler waiting for an answer pass through. (A tool handler's own error
 * is already an error result; around a model call there is no result to recover to, so it wraps tool calls
 * only.)
 */
export const recoveryMiddleware = defineMiddleware({
  name: 'recovery',
  async aroundToolCall(call, next) {
    try {
      return await next(call.request);
    } catch (error) {
      if (call.signal.aborted || isStepControl(error)) throw error;
      const message = error instanceof Error ? error.message : String(error);
      call.logger.warn(
        { err: error, tool: call.request.name },
        'tool call failed: recovered as an error result',
      );
      return {
        content: redactSecrets(`the call of tool "${call.request.name}" failed: ${message}`),
        isError: true,
      };
    }
  },
});
