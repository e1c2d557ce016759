import type { ToolBox } from '../toolbox.js';
import { notesToolbox } from './notes-toolbox.js';
import { stateToolbox } from './state-toolbox.js';
import { tasksToolbox } from './tasks-toolbox.js';
import { utilsToolbox } from './utils-toolbox.js';

export { interactionToolbox, interactionToolboxName } from './interaction-toolbox.js';

/** The toolboxes every worker offers, by the names the config uses. */
export function builtinToolboxes(): ToolBox[] {
  return [
    utilsToolbox(),
    stateToolbox(),
    tasksToolbox(),
    notesToolbox(),
  ];
}
