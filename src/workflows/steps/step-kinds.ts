import { iterationStep } from './iteration/iteration-step.js';
import type { StepKind } from './runner/step-kind.js';
import { teamTurnStep } from './team/team-step.js';
import { toolStep } from './tool/tool-step.js';

/** The one table of step kinds, by BullMQ job name. */
export const stepKinds: ReadonlyMap<string, StepKind<never>> = new Map<string, StepKind<never>>([
  [iterationStep.name, iterationStep as StepKind<never>],
  [toolStep.name, toolStep as StepKind<never>],
  [teamTurnStep.name, teamTurnStep as StepKind<never>],
]);
