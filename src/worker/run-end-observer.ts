import type { ToolBox } from '../tools/index.js';
import type { RunRecord, StepObserver } from '../workflows/index.js';

/**
 * The step observer, with the toolboxes that hold something per run (the browser's page) told when a run
 * ends, so they release it then rather than when it has been idle long enough. Told by the worker whose commit
 * finished the run: a page another worker holds is closed by its idle timer there. Without such toolboxes the
 * observer is returned as it is (absent when telemetry is off, so steps build no reports).
 */
export function withRunEndListeners(
  observer: StepObserver | undefined,
  toolboxes: readonly ToolBox[],
): StepObserver | undefined {
  const listeners = toolboxes.flatMap((toolbox) => (toolbox.runEnded ? [toolbox.runEnded] : []));
  if (listeners.length === 0) return observer;
  const base = observer ?? silentObserver;
  return {
    modelCall: (call) => base.modelCall(call),
    toolCall: (call) => base.toolCall(call),
    runEnded: (record: RunRecord) => {
      base.runEnded(record);
      for (const listener of listeners) listener(record.id);
    },
    runStarted: (record) => base.runStarted(record),
    stepEnded: (step) => base.stepEnded(step),
    rateLimited: (provider, waitMs) => base.rateLimited(provider, waitMs),
    questionTimedOut: (question, at) => base.questionTimedOut(question, at),
    logFields: (run) => base.logFields(run),
  };
}

const silentObserver: StepObserver = {
  modelCall: () => {},
  toolCall: () => {},
  runEnded: () => {},
  runStarted: () => {},
  stepEnded: () => {},
  rateLimited: () => {},
  questionTimedOut: () => {},
  logFields: () => ({}),
};
