import { describe, expect, it } from 'vitest';
import {
  builtinMiddlewareOptions,
  coordinatorKinds as configCoordinatorKinds,
  effectKinds as configEffectKinds,
} from '../../src/config/index.js';
import {
  builtinToolboxNames,
  coordinatorKinds,
  effectKinds,
  middlewareKinds,
  parseConfigText,
  providerKinds,
} from '../../src/index.js';
import { knownToolboxes } from '../../src/tools/builtin/index.js';

/** A config whose agent uses `toolbox`. */
function configWith(toolbox: string): string {
  return `
providers:
  - name: p
    kind: openai
    model: m
    api_key: sk-known-kinds-0000000
agents:
  - name: a
    provider: p
    instructions: x
    toolboxes: [${toolbox}]
`;
}

describe('the known kinds the package exports', () => {
  it('are frozen arrays read from the registries: the built-in provider, effect, middleware, coordinator kinds and toolboxes', () => {
    for (const list of [providerKinds, effectKinds, middlewareKinds, coordinatorKinds, builtinToolboxNames]) {
      expect(Object.isFrozen(list)).toBe(true);
      expect(list.length).toBeGreaterThan(0);
    }
    expect(providerKinds).toEqual(expect.arrayContaining(['anthropic', 'openai', 'scripted']));
    expect(builtinToolboxNames).toEqual(expect.arrayContaining(['filesystem', 'exec', 'http', 'memory']));
    // The config's own lists (what a config is checked against) say the same.
    expect([...effectKinds].sort()).toEqual([...configEffectKinds].sort());
    expect([...coordinatorKinds].sort()).toEqual([...configCoordinatorKinds].sort());
    expect([...middlewareKinds].sort()).toEqual([...builtinMiddlewareOptions.keys()].sort());
  });

  it("each toolbox name is one the CLI's config check accepts (a toolbox may still need settings of its own)", () => {
    const problemOf = (toolbox: string) => {
      try {
        parseConfigText(configWith(toolbox), { env: {}, configDir: '.', knownToolboxes: knownToolboxes([]) });
        return '';
      } catch (error) {
        return (error as Error).message;
      }
    };
    for (const toolbox of builtinToolboxNames) expect(problemOf(toolbox)).not.toMatch(/unknown/i);
    expect(problemOf('no_such_box')).toMatch(/unknown toolbox "no_such_box"/);
  });
});
