import type { ToolBox } from '../toolbox.js';
import { notesToolbox } from './notes-toolbox.js';
import { stateToolbox } from './state-toolbox.js';
import { tasksToolbox } from './tasks-toolbox.js';
import { utilsToolbox } from './utils-toolbox.js';

export {
  delegationToolbox,
  delegationToolboxName,
  type RegistryEntry,
} from './delegation-toolbox.js';
export { interactionToolbox, interactionToolboxName } from './interaction-toolbox.js';

/** The toolboxes every worker offers, by the names the config uses. */
export function builtinToolboxes(): ToolBox[] {
  // biome-ignore format: one toolbox a line, so toolboxes added on other branches merge without conflict
  return [
    utilsToolbox(),
    stateToolbox(),
    tasksToolbox(),
    notesToolbox(),
  ];
}
