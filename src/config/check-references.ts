import type { ConfigProblem } from './config-issues.js';
import { didYouMean } from './suggest.js';

export interface ReferenceCheckOptions {
  /** When given, every agent toolbox must be one of these or an MCP server's name. */
  knownToolboxes?: readonly string[] | undefined;
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
  const mcpServerNames = collectNames(raw.mcp_servers ?? [], 'mcp_servers', 'MCP server', problems);
  const knownToolboxes = toolboxNames(raw.mcp_servers, mcpServerNames, options.knownToolboxes, problems);

  entriesOf(raw.agents).forEach((agent, index) => {
    if (!isRecord(agent)) return;
    if (typeof agent.provider === 'string' && providerNames && !providerNames.includes(agent.provider)) {
      problems.push({
        path: ['agents', index, 'provider'],
        message: unknownReference('provider', agent.provider, providerNames),
      });
    }
    if (knownToolboxes === undefined) return;
    entriesOf(agent.toolboxes).forEach((toolbox, toolboxIndex) => {
      if (typeof toolbox === 'string' && !knownToolboxes.includes(toolbox)) {
        problems.push({
          path: ['agents', index, 'toolboxes', toolboxIndex],
          message: unknownReference('toolbox', toolbox, knownToolboxes),
        });
      }
    });
  });

  if (typeof raw.entry_agent === 'string' && agentNames && !agentNames.includes(raw.entry_agent)) {
    problems.push({ path: ['entry_agent'], message: unknownReference('agent', raw.entry_agent, agentNames) });
  }
  return problems;
}

/**
 * Every toolbox an agent may name: the built-in ones and one per MCP server. A server may not take a
 * built-in toolbox's name (agents could not tell them apart). Undefined when the list is not complete.
 */
function toolboxNames(
  mcpServers: unknown,
  mcpServerNames: readonly string[] | undefined,
  builtin: readonly string[] | undefined,
  problems: ConfigProblem[],
): string[] | undefined {
  if (builtin === undefined) return undefined;
  entriesOf(mcpServers).forEach((server, index) => {
    if (isRecord(server) && typeof server.name === 'string' && builtin.includes(server.name)) {
      problems.push({
        path: ['mcp_servers', index, 'name'],
        message: `"${server.name}" is the name of a built-in toolbox: give the MCP server another name`,
      });
    }
  });
  if (mcpServerNames === undefined) return undefined;
  return [...builtin, ...mcpServerNames.filter((name) => !builtin.includes(name))];
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

function entriesOf(list: unknown): unknown[] {
  return Array.isArray(list) ? list : [];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
