import { resolve } from 'node:path';
import type { ToolsConfig } from '../../config/index.js';
import type { ToolBox } from '../toolbox.js';
import { execToolbox } from './exec-toolbox.js';
import { filesystemToolbox } from './filesystem-toolbox.js';
import { gitToolbox } from './git-toolbox.js';
import { httpToolbox } from './http-toolbox.js';
import { searchToolbox } from './search-toolbox.js';
import { utilsToolbox } from './utils-toolbox.js';

export {
  delegationToolbox,
  delegationToolboxName,
  type RegistryEntry,
} from './delegation-toolbox.js';
export { interactionToolbox, interactionToolboxName } from './interaction-toolbox.js';

/** What the built-in toolboxes are made from: the config's `tools` section and where relative paths start. */
export interface BuiltinToolboxSettings {
  tools: ToolsConfig;
  /** The config file's directory. */
  configDir: string;
}

type BuiltinFactory = (settings: BuiltinToolboxSettings) => ToolBox;

/** The built-in toolboxes by the names the config uses, one per line. */
const builtinFactories = {
  utils: () => utilsToolbox(),
  filesystem: (settings) =>
    filesystemToolbox({ workspace: workspaceOf(settings), settings: settings.tools.filesystem }),
  search: (settings) =>
    searchToolbox({
      workspace: workspaceOf(settings),
      settings: settings.tools.search,
      maxFileBytes: settings.tools.filesystem.max_read_bytes,
    }),
  exec: (settings) => execToolbox({ workspace: workspaceOf(settings), settings: settings.tools.exec }),
  git: (settings) =>
    gitToolbox({
      workDir:
        settings.tools.git.work_dir === undefined
          ? workspaceOf(settings)
          : resolve(settings.configDir, settings.tools.git.work_dir),
      settings: settings.tools.git,
    }),
  http: (settings) => httpToolbox({ settings: settings.tools.http }),
} satisfies Record<string, BuiltinFactory>;

/** Names of the built-in toolboxes (for checking a config's agents before anything is built). */
export const builtinToolboxNames: readonly string[] = Object.keys(builtinFactories);

/** The built-in toolboxes, configured from the config's `tools` section. */
export function builtinToolboxes(settings: BuiltinToolboxSettings): ToolBox[] {
  return Object.values(builtinFactories).map((create: BuiltinFactory) => create(settings));
}

/** The toolbox names a config may use: the built-in ones and those registered from code. */
export function knownToolboxNames(extraToolboxes: readonly ToolBox[]): string[] {
  return [...builtinToolboxNames, ...extraToolboxes.map((toolbox) => toolbox.name)];
}

function workspaceOf(settings: BuiltinToolboxSettings): string {
  return resolve(settings.configDir, settings.tools.workspace);
}
