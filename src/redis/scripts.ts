import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

/**
 * The one owner of our Lua scripts. Each script is one atomic operation in src/redis/lua/<name>.lua with a
 * header listing KEYS, ARGV and returns; `--- @include "x"` inlines src/redis/lua/includes/x.lua.
 */
const scriptKeyCounts = {
  'answer-question': 4,
  'ask-question': 5,
  'begin-tool-call': 5,
  'cancel-run': 5,
  'commit-step': 9,
  'commit-tool-outcome': 5,
  'create-run': 7,
  'load-iteration': 3,
  'mark-parked': 2,
  'note-write': 1,
  'rate-limit-admit': 3,
  'rate-limit-settle': 3,
  'report-progress': 4,
  'state-set': 2,
  'state-watch': 3,
  'task-claim': 1,
  'task-create': 2,
  'task-update': 1,
} as const;

export type ScriptName = keyof typeof scriptKeyCounts;

const luaDir = new URL('./lua/', import.meta.url);

function readLua(relativePath: string): string {
  return readFileSync(new URL(relativePath, luaDir), 'utf8');
}

/** Resolves includes once, recursively, each included at most once. */
export function loadScriptSource(name: string, included = new Set<string>()): string {
  const source = readLua(`${name}.lua`);
  return source.replace(/^--- @include "([\w-]+)"$/gm, (_line, include: string) => {
    if (included.has(include)) return '';
    included.add(include);
    return loadScriptSource(`includes/${include}`, included);
  });
}

const commandNames: Record<ScriptName, string> = {
  'answer-question': 'ratchetAnswerQuestion',
  'ask-question': 'ratchetAskQuestion',
  'begin-tool-call': 'ratchetBeginToolCall',
  'cancel-run': 'ratchetCancelRun',
  'commit-step': 'ratchetCommitStep',
  'commit-tool-outcome': 'ratchetCommitToolOutcome',
  'create-run': 'ratchetCreateRun',
  'load-iteration': 'ratchetLoadIteration',
  'mark-parked': 'ratchetMarkParked',
  'note-write': 'ratchetNoteWrite',
  'rate-limit-admit': 'ratchetRateLimitAdmit',
  'rate-limit-settle': 'ratchetRateLimitSettle',
  'report-progress': 'ratchetReportProgress',
  'state-set': 'ratchetStateSet',
  'state-watch': 'ratchetStateWatch',
  'task-claim': 'ratchetTaskClaim',
  'task-create': 'ratchetTaskCreate',
  'task-update': 'ratchetTaskUpdate',
};

/** Registers every script on a client (EVALSHA with automatic fallback to EVAL). */
export function defineScripts(redis: Redis): void {
  for (const name of Object.keys(scriptKeyCounts) as ScriptName[]) {
    const command = commandNames[name];
    if (typeof (redis as unknown as Record<string, unknown>)[command] === 'function') continue;
    redis.defineCommand(command, { numberOfKeys: scriptKeyCounts[name], lua: loadScriptSource(name) });
  }
}

type ScriptClient = Redis & Record<string, (...args: (string | number)[]) => Promise<unknown>>;

/** Runs a script registered by defineScripts; replies are arrays of strings. */
export async function runScript(
  redis: Redis,
  name: ScriptName,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<string[]> {
  if (keys.length !== scriptKeyCounts[name]) {
    throw new Error(`script ${name} takes ${scriptKeyCounts[name]} keys, got ${keys.length}`);
  }
  const command = (redis as ScriptClient)[commandNames[name]];
  if (!command) throw new Error(`script ${name} is not defined on this client: call defineScripts first`);
  return (await command.call(redis, ...keys, ...args)) as string[];
}
