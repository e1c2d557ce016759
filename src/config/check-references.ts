import type { ConfigProblem } from './config-issues.js';
import { didYouMean } from './suggest.js';

/**
 * A toolbox that exists: its name, or its name and tools (a ToolBox fits) so that agents' tool lists can
 * be checked too.
 */
export type KnownToolbox = string | { name: string; tools?: readonly { name: string }[] };

export interface ReferenceCheckOptions {
  /** When given, every agent toolbox must be one of these. */
  knownToolboxes?: readonly KnownToolbox[] | undefined;
}

/**
 * Checks what the schema cannot see entry by entry: unique provider and agent names, and that agents'
 * providers and toolboxes and `entry_agent` name something that exists. Works on the raw parsed YAML so it
 * runs even when other parts fail the schema; whatever does not have the expected shape is skipped (the
 * schema reports it), and references are only checked against a complete list of names.
 */
export function checkReferences(raw: unknown, options: ReferenceCheckOptions = {}): ConfigProblem[] {
  if (!isRecord(raw)) return [];
  const problems: ConfigProblem[] = [];
  const providerNames = collectNames(raw.providers, 'providers', 'provider', problems);
  const agentNames = collectNames(raw.agents, 'agents', 'agent', problems);

  entriesOf(raw.agents).forEach((agent, index) => {
    if (!isRecord(agent)) return;
    if (typeof agent.provider === 'string' && providerNames && !providerNames.includes(agent.provider)) {
      problems.push({
        path: ['agents', index, 'provider'],
        message: unknownReference('provider', agent.provider, providerNames),
      });
    }
    if (options.knownToolboxes === undefined) return;
    const known = new Map(
      options.knownToolboxes.map((toolbox) =>
        typeof toolbox === 'string'
          ? [toolbox, undefined]
          : [toolbox.name, toolbox.tools?.map((tool) => tool.name)],
      ),
    );
    entriesOf(agent.toolboxes).forEach((reference, toolboxIndex) => {
      const path = ['agents', index, 'toolboxes', toolboxIndex];
      const name = isRecord(reference) ? reference.name : reference;
      if (typeof name !== 'string') return;
      if (!known.has(name)) {
        const pathOfName = isRecord(reference) ? [...path, 'name'] : path;
        problems.push({ path: pathOfName, message: unknownReference('toolbox', name, [...known.keys()]) });
        return;
      }
      const tools = known.get(name);
      if (!isRecord(reference) || tools === undefined) return;
      entriesOf(reference.tools).forEach((tool, toolIndex) => {
        if (typeof tool === 'string' && !tools.includes(tool)) {
          problems.push({ path: [...path, 'tools', toolIndex], message: unknownTool(tool, name, tools) });
        }
      });
    });
  });

  if (typeof raw.entry_agent === 'string' && agentNames && !agentNames.includes(raw.entry_agent)) {
    problems.push({ path: ['entry_agent'], message: unknownReference('agent', raw.entry_agent, agentNames) });
  }
  return problems;
}

/**
 * The names of a list's entries, reporting duplicates; undefined when some entry has no usable name, since
 * a reference to it would then be reported as unknown for the wrong reason.
 */
function collectNames(
  list: unknown,
  listKey: string,
  label: string,
  problems: ConfigProblem[],
): string[] | undefined {
  if (!Array.isArray(list)) return undefined;
  const firstIndex = new Map<string, number>();
  let complete = true;
  list.forEach((entry, index) => {
    const name = isRecord(entry) ? entry.name : undefined;
    if (typeof name !== 'string') {
      complete = false;
      return;
    }
    const earlier = firstIndex.get(name);
    if (earlier === undefined) firstIndex.set(name, index);
    else
      problems.push({
        path: [listKey, index, 'name'],
        message: `duplicate ${label} name "${name}" (also ${listKey}[${earlier}])`,
      });
  });
  return complete ? [...firstIndex.keys()] : undefined;
}

function unknownReference(
  label: 'provider' | 'toolbox' | 'agent',
  name: string,
  known: readonly string[],
): string {
  const hint = didYouMean(name, known);
  if (hint !== '') return `unknown ${label} "${name}"${hint}`;
  const plural = label === 'toolbox' ? 'toolboxes' : `${label}s`;
  return `unknown ${label} "${name}" (known ${plural}: ${known.length > 0 ? known.join(', ') : 'none'})`;
}

function unknownTool(tool: string, toolbox: string, known: readonly string[]): string {
  const hint = didYouMean(tool, known);
  if (hint !== '') return `unknown tool "${tool}" in toolbox "${toolbox}"${hint}`;
  return `unknown tool "${tool}" in toolbox "${toolbox}" (its tools: ${known.join(', ') || 'none'})`;
}

function entriesOf(list: unknown): unknown[] {
  return Array.isArray(list) ? list : [];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
