import type { ToolBox } from '../toolbox.js';
import { utilsToolbox } from './utils-toolbox.js';

export {
  delegationToolbox,
  delegationToolboxName,
  type RegistryEntry,
} from './delegation-toolbox.js';
export { interactionToolbox, interactionToolboxName } from './interaction-toolbox.js';

/** The toolboxes every worker offers, by the names the config uses. */
export function builtinToolboxes(): ToolBox[] {
  return [utilsToolbox()];
}
