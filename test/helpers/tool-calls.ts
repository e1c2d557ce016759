import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach } from 'vitest';
import { type ToolsConfig, toolsConfigSchema } from '../../src/config/tools-config-schema.js';
import { silentLogger } from '../../src/log/index.js';
import { redisMemory } from '../../src/redis/memory-store.js';
import { redisSessionData } from '../../src/redis/session-data-store.js';
import {
  findTool,
  prepareToolCall,
  runToolHandler,
  type SessionAccess,
  type SessionDataStore,
  type ToolBox,
  type ToolContext,
  type ToolOutcome,
} from '../../src/tools/index.js';

/** A tool context as a tool step builds it, with a fresh signal unless one is given. */
export function toolContext(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    idempotencyKey: 'key-1',
    signal: new AbortController().signal,
    logger: silentLogger(),
    sessionId: 'ses_0123456789abcdef',
    runId: 'run_0123456789abcdef_0123456789',
    agent: 'assistant',
    iteration: 1,
    toolCallId: 'call_1_0',
    ask: async () => 'an answer',
    reportProgress: async () => {},
    subGoals: async () => [],
    delegate: async () => [],
    chat: async () => [],
    session: sessionAccess(),
    recordFileChange: () => {},
    memory: redisMemory({} as Redis, { prefix: 'test', shards: 1 }),
    ...overrides,
  };
}

/**
 * The `session` of a tool context. By default for tools that touch no session data: a store on a Redis
 * client that is never connected; tests of session data give their store and what parking and waking do.
 */
export function sessionAccess(overrides: Partial<SessionAccess> = {}): SessionAccess {
  return {
    data: unreachableSessionData(),
    jobId: 'job-1',
    now: () => new Date(),
    recheckMs: 1000,
    park: async () => new Error('parked'),
    wake: async () => {},
    ...overrides,
  };
}

/** Calls a tool the way a tool step does: arguments as JSON, checked against the schema, then the handler. */
export async function callTool(
  toolbox: ToolBox,
  name: string,
  input: unknown,
  context: ToolContext = toolContext(),
): Promise<ToolOutcome> {
  const tool = findTool([toolbox], name);
  const names = toolbox.tools.map((candidate) => candidate.name);
  const prepared = prepareToolCall({ name, arguments: JSON.stringify(input) }, tool, names);
  if (!prepared.ok) return prepared.outcome;
  return runToolHandler(prepared.tool, prepared.input, context);
}

/** The parsed result of a call that must have succeeded. */
export async function callOk(
  toolbox: ToolBox,
  name: string,
  input: unknown,
  context?: ToolContext,
  // biome-ignore lint/suspicious/noExplicitAny: tests read fields of many result shapes
): Promise<any> {
  const outcome = await callTool(toolbox, name, input, context);
  if (outcome.isError) throw new Error(`expected ${name} to succeed, got: ${outcome.content}`);
  try {
    return JSON.parse(outcome.content);
  } catch {
    return outcome.content;
  }
}

/** The error text of a call that must have failed. */
export async function callError(toolbox: ToolBox, name: string, input: unknown, context?: ToolContext) {
  const outcome = await callTool(toolbox, name, input, context);
  if (!outcome.isError) throw new Error(`expected ${name} to fail, got: ${outcome.content}`);
  return outcome.content;
}

/** The `tools:` section with defaults, as the config loader produces it. */
export function toolsSettings(section: Record<string, unknown> = {}): ToolsConfig {
  return toolsConfigSchema.parse(section);
}

/**
 * A fresh temporary directory (real path) for each test of the file or describe block that calls this,
 * removed after the test. It is made before the `beforeEach` hooks registered after this call run.
 */
export function useTemporaryDirectory(label: string): { readonly path: string } {
  let current: string | undefined;
  beforeEach(() => {
    current = realpathSync(mkdtempSync(join(tmpdir(), `ratchet-${label}-`)));
  });
  afterEach(() => {
    if (current !== undefined) rmSync(current, { recursive: true, force: true });
    current = undefined;
  });
  return {
    get path(): string {
      if (current === undefined) throw new Error('the temporary directory exists only while a test runs');
      return current;
    },
  };
}

/** Session data on a Redis client that never connects: for tools that must not touch it. */
function unreachableSessionData(): SessionDataStore {
  return redisSessionData({} as Redis, { prefix: 'test', shards: 1 }, 'ses_none');
}
