import type { RatchetConfig } from './config-schema.js';

/** The agent a new session talks to: `entry_agent`, else the first agent. */
export function resolveEntryAgent(config: RatchetConfig): string {
  if (config.entry_agent !== undefined) return config.entry_agent;
  const first = config.agents[0];
  if (first === undefined) throw new Error('config has no agents (the schema requires at least one)');
  return first.name;
}
