import { registerProvider } from '../src/models/index.js';
import { type ScriptedProviderFields, scriptedProviderKind } from '../src/models/scripted/index.js';
import { markStep, type StepMarks } from './step-marks.js';

export const markedScriptedKind = 'bench-marked-scripted';

/**
 * Registers a provider kind that is the scripted model plus a mark (into `marks`) when each model call
 * starts: the point of an iteration job right after it loaded the run and appended the tool results; and,
 * given `ends`, a mark there when the call has answered. A later registration replaces this one, so call it
 * before building each worker.
 */
export function registerMarkedScripted(marks: StepMarks, ends?: StepMarks): void {
  registerProvider<ScriptedProviderFields>(markedScriptedKind, {
    fieldsSchema: scriptedProviderKind.fieldsSchema,
    create(config, context) {
      const scripted = scriptedProviderKind.create(config, context);
      return {
        async complete(request, signal) {
          markStep(marks, request.context.runId);
          const reply = await scripted.complete(request, signal);
          if (ends) markStep(ends, request.context.runId);
          return reply;
        },
      };
    },
  });
}
