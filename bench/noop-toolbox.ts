import { z } from 'zod';
import { createToolBox, defineTool, type ToolBox } from '../src/tools/index.js';
import { markStep, type StepMarks } from './step-marks.js';

export const noopToolboxName = 'bench';

/**
 * `noop`: an idempotent tool that does nothing but mark (into `marks`) when its handler starts: the point of
 * a tool job right after it loaded the call and recorded its intent.
 */
export function noopToolbox(marks: StepMarks): ToolBox {
  const noop = defineTool({
    name: 'noop',
    description: 'Does nothing.',
    inputSchema: z.strictObject({}),
    idempotent: true,
    handler: async (context) => {
      markStep(marks, context.runId);
      return 'ok';
    },
  });
  return createToolBox(noopToolboxName, [noop]);
}
