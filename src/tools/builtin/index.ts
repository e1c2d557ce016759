import { resolve } from 'node:path';
import type { ToolsConfig } from '../../config/index.js';
import { toolsConfigSchema } from '../../config/tools-config-schema.js';
import type { ToolBox } from '../toolbox.js';
import { browserToolbox } from './browser/browser-toolbox.js';
import { execToolbox } from './exec/exec-toolbox.js';
import { filesystemToolbox } from './filesystem/filesystem-toolbox.js';
import { gitToolbox } from './git/git-toolbox.js';
import { httpToolbox } from './http/http-toolbox.js';
import { memoryToolbox } from './memory/memory-toolbox.js';
import { projectContextSource } from './project-context.js';
import { searchToolbox } from './search/search-toolbox.js';
import { notesToolbox } from './session-data/notes-toolbox.js';
import { stateToolbox } from './session-data/state-toolbox.js';
import { tasksToolbox } from './session-data/tasks-toolbox.js';
import { utilsToolbox } from './utils/utils-toolbox.js';
import { waitsToolbox } from './waits/waits-toolbox.js';

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
  browser: (settings) =>
    browserToolbox({ settings: settings.tools.browser, workspace: workspaceOf(settings) }),
  state: () => stateToolbox(),
  tasks: () => tasksToolbox(),
  notes: () => notesToolbox(),
  memory: (settings) => memoryToolbox({ settings: settings.tools.memory }),
  waits: () => waitsToolbox(),
} satisfies Record<string, BuiltinFactory>;

/** Names of the built-in toolboxes (for checking a config's agents before anything is built). */
export const builtinToolboxNames: readonly string[] = Object.keys(builtinFactories);

/** The toolboxes that work on the workspace: their agents get the project's context files (tools.project_context). */
const workspaceToolboxes: ReadonlySet<string> = new Set(['filesystem', 'search', 'exec', 'git']);

/** The built-in toolboxes, configured from the config's `tools` section. */
export function builtinToolboxes(settings: BuiltinToolboxSettings): ToolBox[] {
  const projectContext = projectContextSource(workspaceOf(settings), settings.tools.project_context);
  return Object.entries(builtinFactories).map(([name, create]: [string, BuiltinFactory]) => {
    const toolbox = create(settings);
    return projectContext && workspaceToolboxes.has(name)
      ? { ...toolbox, runContext: projectContext }
      : toolbox;
  });
}

/**
 * The toolboxes a config may use, with their tools (for checking narrowed toolboxes at load): the built-in
 * ones, built with default settings (building one has no effect), and those registered from code.
 */
export function knownToolboxes(extraToolboxes: readonly ToolBox[]): ToolBox[] {
  return [...builtinToolboxes({ tools: toolsConfigSchema.parse({}), configDir: '.' }), ...extraToolboxes];
}

function workspaceOf(settings: BuiltinToolboxSettings): string {
  return resolve(settings.configDir, settings.tools.workspace);
}
