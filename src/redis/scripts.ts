import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { RedisClient } from './connection.js';

/**
 * The one owner of our Lua scripts. Each script is one atomic operation in src/redis/lua/<name>.lua with a
 * header listing KEYS, ARGV and returns; `--- @include "x"` inlines src/redis/lua/includes/x.lua. This table
 * is the one place a script is named: its key count (as its header documents them), and its command name on a
 * client is derived from the name (`commit-step` → `ratchetCommitStep`, scriptCommand).
 */
const scriptKeyCounts = {
  'admission-admit': 5,
  'admission-release': 5,
  'answer-question': 6,
  'ask-question': 6,
  'begin-tool-call': 5,
  'cancel-run': 11,
  'cancel-queued': 1,
  'close-questions': 3,
  /** 21, and BullMQ's 14 completion keys when the commit completes its own job (decision 0056). */
  'commit-step': 'variable',
  'commit-steers': 6,
  /** 10, and BullMQ's 14 completion keys when the commit completes its own job (decision 0056). */
  'commit-tool-outcome': 'variable',
  'create-run': 11,
  'decide-fire': 2,
  'delete-schedule': 3,
  'event-publish': 5,
  'expire-run': 12,
  /** Every key of the session it removes: as many as it has. */
  'expire-session': 'variable',
  'fork-run': 10,
  'index-run-tenants': 1,
  'list-runs': 11,
  'interrupt-run': 14,
  'load-iteration': 5,
  'mark-parked': 2,
  'memory-write': 3,
  'note-write': 1,
  'put-schedule': 2,
  'rate-limit-admit': 3,
  'record-definition': 1,
  'remembered-approval': 5,
  'rate-limit-settle': 3,
  'release-dead-lock': 3,
  'request-upgrade': 2,
  'report-progress': 4,
  'retry-run': 12,
  'run-signal': 3,
  'send-busy-message': 5,
  'settle-queue-start': 3,
  'start-queued-run': 9,
  'state-delete': 2,
  'state-set': 2,
  'state-watch': 3,
  'task-claim': 1,
  'task-create': 2,
  'task-update': 1,
  'unindex-runs': 1,
  'wait-begin': 3,
  'wait-settle': 2,
  'wait-for-worker': 4,
  'worker-found': 3,
} as const satisfies Record<string, number | 'variable'>;

export type ScriptName = keyof typeof scriptKeyCounts;

const luaDir = new URL('./lua/', import.meta.url);

function readLua(relativePath: string): string {
  return readFileSync(new URL(relativePath, luaDir), 'utf8');
}

/**
 * BullMQ's own Lua includes (the functions its scripts are made of), of the BullMQ this process runs: a script
 * that adds a step job in its commit (includes/add-step-job.lua) adds it with BullMQ's code, not a copy.
 */
const bullmqIncludes = join(
  dirname(createRequire(import.meta.url).resolve('bullmq/package.json')),
  'dist/esm/commands/includes',
);

/** One of BullMQ's includes, with the includes it names in its own way (`--- @include "x"`), each once. */
function loadBullmqInclude(name: string, included: Set<string>): string {
  const source = readFileSync(join(bullmqIncludes, `${name}.lua`), 'utf8');
  return source.replace(/^--- @include "(?:includes\/)?([\w-]+)"$/gm, (_line, include: string) =>
    includeOnce(`bullmq:${include}`, included, () => loadBullmqInclude(include, included)),
  );
}

/** BullMQ's Lua commands (its scripts, `<name>-<key count>.lua`), beside its includes. */
const bullmqCommands = dirname(bullmqIncludes);

/**
 * One of BullMQ's commands as a local function of ours (`--- @include-bullmq-command "x" as name`): its
 * includes where the directive stands (each once, shared with the other BullMQ includes of the script), its
 * body as `local function name(commandKeys, commandArgv)` (its KEYS and ARGV, renamed), so that its keys
 * and arguments are the caller's to give and its returns return from the function. BullMQ's own code, not a
 * copy: it follows the installed version.
 */
function loadBullmqCommand(name: string, as: string, included: Set<string>): string {
  const source = readFileSync(join(bullmqCommands, `${name}.lua`), 'utf8');
  const includes: string[] = [];
  const body = source.replace(/^--- @include "(?:includes\/)?([\w-]+)"$/gm, (_line, include: string) => {
    includes.push(includeOnce(`bullmq:${include}`, included, () => loadBullmqInclude(include, included)));
    return '';
  });
  // Its KEYS and ARGV named as the function's parameters, so that the caller's own stay apart.
  const own = body.replace(/\bKEYS\b/g, 'commandKeys').replace(/\bARGV\b/g, 'commandArgv');
  return `${includes.join('\n')}\nlocal function ${as}(commandKeys, commandArgv)\n${own}\nend\n`;
}

function includeOnce(key: string, included: Set<string>, load: () => string): string {
  if (included.has(key)) return '';
  included.add(key);
  return load();
}

/**
 * Resolves includes once, recursively, each included at most once: `--- @include "x"` is
 * src/redis/lua/includes/x.lua, `--- @include-bullmq "x"` BullMQ's include x, `--- @include-bullmq-command "x"
 * as f` BullMQ's command x as the local function f (loadBullmqCommand).
 */
export function loadScriptSource(name: string, included = new Set<string>()): string {
  const source = readLua(`${name}.lua`).replace(
    /^--- @include-bullmq-command "([\w-]+)" as (\w+)$/gm,
    (_line, command: string, as: string) =>
      includeOnce(`bullmq-command:${command}`, included, () => loadBullmqCommand(command, as, included)),
  );
  return source.replace(/^--- @include(-bullmq)? "([\w-]+)"$/gm, (_line, bullmq, include: string) =>
    bullmq
      ? includeOnce(`bullmq:${include}`, included, () => loadBullmqInclude(include, included))
      : includeOnce(include, included, () => loadScriptSource(`includes/${include}`, included)),
  );
}

// Worked out once: every script a step runs looks its command up.
const scriptCommands = Object.fromEntries(
  (Object.keys(scriptKeyCounts) as ScriptName[]).map((name) => [
    name,
    `ratchet${name.replace(/(?:^|-)([a-z])/g, (_match, letter: string) => letter.toUpperCase())}`,
  ]),
) as Record<ScriptName, string>;

/** The command a script is registered as on a client (defineScripts): `ratchet` and its name in PascalCase. */
export function scriptCommand(name: ScriptName): string {
  return scriptCommands[name];
}

/** Registers every script on a client (EVALSHA with automatic fallback to EVAL). */
export function defineScripts(redis: RedisClient): void {
  for (const name of Object.keys(scriptKeyCounts) as ScriptName[]) {
    const command = scriptCommand(name);
    if (typeof (redis as unknown as Record<string, unknown>)[command] === 'function') continue;
    const keyCount = scriptKeyCounts[name];
    redis.defineCommand(command, {
      // Without a number, the caller passes the key count first (runScript does).
      ...(keyCount === 'variable' ? {} : { numberOfKeys: keyCount }),
      lua: loadScriptSource(name),
    });
  }
}

type ScriptClient = RedisClient & Record<string, (...args: (string | number | Buffer)[]) => Promise<unknown>>;

/** Runs a script registered by defineScripts; replies are arrays of strings. */
export async function runScript(
  redis: RedisClient,
  name: ScriptName,
  keys: readonly string[],
  args: readonly (string | number | Buffer)[],
): Promise<string[]> {
  const keyCount = scriptKeyCounts[name];
  if (keyCount !== 'variable' && keys.length !== keyCount) {
    throw new Error(`script ${name} takes ${keyCount} keys, got ${keys.length}`);
  }
  const command = (redis as ScriptClient)[scriptCommand(name)];
  if (!command) throw new Error(`script ${name} is not defined on this client: call defineScripts first`);
  const counted = keyCount === 'variable' ? [keys.length, ...keys] : keys;
  return (await command.call(redis, ...counted, ...args)) as string[];
}
