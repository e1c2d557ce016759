import { registerProvider } from '../src/models/index.js';
import { type ScriptedProviderFields, scriptedProviderKind } from '../src/models/scripted/index.js';
import { markStep, type StepMarks } from './step-marks.js';

export const markedScriptedKind = 'bench-marked-scripted';

/** Told of each model call's start and of its answer, with the run's id. */
export interface CallListener {
  started(runId: string): void;
  answered?(runId: string): void;
}

/**
 * Registers a provider kind that is the scripted model plus a mark (into `marks`) when each model call
 * starts: the point of an iteration job right after it loaded the run and appended the tool results; and,
 * given `ends`, a mark there when the call has answered. A later registration replaces this one, so call it
 * before building each worker.
 */
export function registerMarkedScripted(marks: StepMarks, ends?: StepMarks): void {
  registerListenedScripted({
    started: (runId) => markStep(marks, runId),
    ...(ends ? { answered: (runId: string) => markStep(ends, runId) } : {}),
  });
}

/** The same provider kind, telling `listener` instead (a worker process prints its marks to its parent). */
export function registerListenedScripted(listener: CallListener): void {
  registerProvider<ScriptedProviderFields>(markedScriptedKind, {
    fieldsSchema: scriptedProviderKind.fieldsSchema,
    create(config, context) {
      const scripted = scriptedProviderKind.create(config, context);
      return {
        async complete(request, signal) {
          listener.started(request.context.runId);
          const reply = await scripted.complete(request, signal);
          listener.answered?.(request.context.runId);
          return reply;
        },
      };
    },
  });
}
