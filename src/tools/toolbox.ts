import type { ToolDefinition } from '../models/completer.js';
import type { MemoryStore } from './builtin/memory/memory-store.js';
import { type Tool, toolDefinitionOf } from './tool.js';

// biome-ignore lint/suspicious/noExplicitAny: a toolbox holds tools of many input types
export type AnyTool = Tool<any>;

export interface ToolBox {
  name: string;
  tools: readonly AnyTool[];
  /** The tools change while the worker runs (an MCP server's, listed when it connects and when it says so). */
  dynamic?: boolean;
  /** Text added to the instructions at the start of each run (project context files, memory). */
  runContext?: RunContextSource;
  /**
   * Keeps a note in the agent's memory for the engine (the `memory` toolbox gives it): what an effect's
   * after phase asked to remember (decision 0044), once per `idempotencyKey`. Resolves to a problem (the memory is
   * full, the note too long for it) or undefined when the note is kept.
   */
  keepNote?(request: KeepNoteRequest): Promise<string | undefined>;
  /** Releases what the toolbox holds (the browser toolbox's Chromium): the worker calls it when it stops. */
  close?(): Promise<void>;
  /** A run ended, committed by this worker: release what the toolbox holds for it (the browser's page). */
  runEnded?(runId: string): void;
}

/** What a toolbox's start-of-run context is read with. */
export interface RunContextRequest {
  agent: string;
  /** Memory that outlives sessions (what the `memory` toolbox keeps). */
  memory: MemoryStore;
  now: Date;
  signal: AbortSignal;
}

/** A note the engine keeps in an agent's memory (see ToolBox.keepNote). */
export interface KeepNoteRequest {
  memory: MemoryStore;
  agent: string;
  sessionId: string;
  runId: string;
  name: string;
  content: string;
  /** The write happens once per key: a step that runs again writes nothing new. */
  idempotencyKey: string;
  now: Date;
}

/**
 * Text a toolbox adds to the instructions of the agents that use it, read once at the start of a run and
 * recorded with the run, so a repeated step sends the same text. Toolboxes that give the same `key` (the
 * workspace toolboxes' project context) are read once.
 */
export interface RunContextSource {
  key: string;
  read(request: RunContextRequest): Promise<string>;
}

export function createToolBox(name: string, tools: readonly AnyTool[]): ToolBox {
  const seen = new Set<string>();
  for (const tool of tools) {
    if (seen.has(tool.name)) throw new Error(`toolbox "${name}" has two tools named "${tool.name}"`);
    seen.add(tool.name);
  }
  return { name, tools };
}

/** Searches the toolboxes in order; the first match wins. */
export function findTool(toolboxes: readonly ToolBox[], name: string): Tool | undefined {
  for (const toolbox of toolboxes) {
    const tool = toolbox.tools.find((candidate) => candidate.name === name);
    if (tool) return tool;
  }
  return undefined;
}

/** The tools an agent offers the model: one per name, the first toolbox's when names clash. */
export function toolDefinitions(toolboxes: readonly ToolBox[]): ToolDefinition[] {
  const byName = new Map<string, ToolDefinition>();
  for (const toolbox of toolboxes) {
    for (const tool of toolbox.tools) {
      if (!byName.has(tool.name)) byName.set(tool.name, toolDefinitionOf(tool));
    }
  }
  return [...byName.values()];
}
