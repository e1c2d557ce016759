import type { ToolboxReference } from './config-schema.js';
import type { LoadedConfig } from './load-config.js';
import { resolveEntryAgent } from './resolve-entry-agent.js';
import { webhookIdOf } from './webhook-config-schema.js';

/** A short human-readable account of a loaded config (for `ratchet config validate`); secrets redacted. */
export function formatConfigSummary(loaded: LoadedConfig): string {
  const { config } = loaded;
  const lines = [`config ${loaded.path}`, 'providers:'];
  for (const provider of config.providers) {
    lines.push(`  ${provider.name}: kind ${provider.kind}, model ${provider.model}`);
  }
  lines.push('agents:');
  for (const agent of config.agents) {
    const toolboxes = agent.toolboxes.length > 0 ? agent.toolboxes.map(describeToolbox).join(', ') : 'none';
    lines.push(
      `  ${agent.name}: provider ${agent.provider}, toolboxes ${toolboxes}, ` +
        `max_iterations ${agent.options.max_iterations}`,
    );
  }
  if (config.handoffs.length > 0) {
    lines.push('handoff groups:');
    for (const group of config.handoffs) {
      lines.push(`  ${group.name}: ${group.members.join(' ⇄ ')}, max_handoffs ${group.max_handoffs}`);
    }
  }
  if (config.teams.length > 0) {
    lines.push('teams:');
    for (const team of config.teams) {
      const members = team.members.map((member) => `${member.agent} (${member.role})`).join(', ');
      lines.push(`  ${team.name}: ${members}, coordinator ${team.coordinator.kind}`);
    }
  }
  if (config.mcp_servers.length > 0) {
    // Names and where they run only: env, headers and URLs may carry secrets.
    lines.push('mcp servers:');
    for (const server of config.mcp_servers) {
      const where = server.transport === 'stdio' ? server.command : hostOf(server.url);
      lines.push(`  ${server.name}: ${server.transport} (${where})`);
    }
  }
  if (config.webhooks.length > 0) {
    // The host only: a URL's path or query may carry a token.
    lines.push('webhooks:');
    config.webhooks.forEach((webhook, index) => {
      lines.push(`  ${webhookIdOf(webhook, index)}: ${hostOf(webhook.url)} (${webhook.events.join(', ')})`);
    });
  }
  const { redis } = config;
  lines.push(
    `entry agent: ${resolveEntryAgent(config)}`,
    `redis: ${redactUrl(redis.url)} (prefix ${redis.prefix}, ${redis.shards} shard${redis.shards === 1 ? '' : 's'})`,
    `worker: concurrency ${config.worker.concurrency}`,
  );
  return lines.join('\n');
}

/** `git`, or `git (git_status, git_diff)` for a toolbox narrowed to some tools. */
function describeToolbox(reference: ToolboxReference): string {
  if (typeof reference === 'string') return reference;
  return reference.tools ? `${reference.name} (${reference.tools.join(', ')})` : reference.name;
}

/** The URL with any password replaced by `***`; a URL that does not parse is hidden entirely. */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '(unparseable url)';
  }
  if (parsed.password !== '') parsed.password = '***';
  return parsed.toString();
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(unparseable url)';
  }
}
