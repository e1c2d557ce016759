// The names a config may use for its kinds, for editors and validation UIs that offer or check them without
// loading a config. Each list is read from the registry the workers build from, so it cannot drift from it.
import { knownProviderKinds } from './models/index.js';
import { builtinToolboxNames as toolboxNames } from './tools/builtin/index.js';
import { builtinCoordinatorDefinitions, builtinEffects, builtinMiddleware } from './workflows/index.js';

/**
 * The provider kinds built in (`providers[].kind`). A kind added with `registerProvider` is not in it: read
 * the registry then (it is taken at import, before code of yours runs).
 */
export const providerKinds: readonly string[] = Object.freeze(knownProviderKinds());

/** The built-in effect kinds (`agents[].effects[].kind`); `defineEffect` adds others. */
export const effectKinds: readonly string[] = Object.freeze([...builtinEffects.keys()]);

/** The built-in toolbox names (`agents[].toolboxes`); `createToolBox` and `mcp_servers` add others. */
export const builtinToolboxNames: readonly string[] = Object.freeze([...toolboxNames]);

/** The built-in middleware kinds (`agents[].middleware[].kind`); `defineMiddleware` adds others. */
export const middlewareKinds: readonly string[] = Object.freeze(builtinMiddleware.map((entry) => entry.name));

/** The built-in coordinator kinds (`teams[].coordinator.kind`); `defineCoordinator` adds others. */
export const coordinatorKinds: readonly string[] = Object.freeze(
  builtinCoordinatorDefinitions.map((entry) => entry.kind),
);
