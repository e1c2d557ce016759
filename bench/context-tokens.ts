import { z } from 'zod';
import '../src/models/index.js';
import { configSchema, type LoadedConfig } from '../src/config/index.js';
import { silentLogger } from '../src/log/index.js';
import { closeRedis, createRedis } from '../src/redis/connection.js';
import { createToolBox, defineTool } from '../src/tools/index.js';
import { RatchetWorker } from '../src/worker/index.js';
import { benchAgent } from './bench-config.js';
import { createBenchEngine } from './bench-engine.js';
import { deleteScratchKeys, scratchPrefix } from './scratch-keys.js';

/**
 * D. Tokens sent per iteration over one long run whose tool results are large: the same 100-iteration run
 * (each iteration but the last calls `large`, which returns `resultChars` characters) with the effects off
 * (`effects: []`) and with the defaults (trim_tool_results, then compact at 0.8 of the window). The tokens of
 * each request are what the scripted model reports as its input (about four characters a token, tool
 * definitions included), read from each reply's usage in the transcript.
 */
export interface ContextTokensResult {
  label: string;
  /** Input tokens of each iteration's request, in order. */
  tokens: number[];
  compactions: number;
  transcriptLength: number;
}

export const contextWindow = 32_000;
export const contextThreshold = 0.8;
const resultChars = 4_000;

function largeToolbox() {
  return createToolBox('context-bench', [
    defineTool({
      name: 'large',
      description: 'Returns a long text.',
      inputSchema: z.strictObject({ n: z.number().int() }),
      idempotent: true,
      handler: async (_context, input) => `result ${input.n}: `.padEnd(resultChars, 'x'),
    }),
  ]);
}

function configOf(url: string, prefix: string, iterations: number, effects: unknown[] | undefined) {
  const replies = [
    ...Array.from({ length: iterations - 1 }, (_, index) => ({
      tool_calls: [{ name: 'large', arguments: { n: index } }],
    })),
    { text: 'done' },
  ];
  const config = configSchema.parse({
    providers: [{ name: 'model', kind: 'scripted', model: 'bench', replies, context_window: contextWindow }],
    agents: [
      {
        name: benchAgent,
        provider: 'model',
        toolboxes: ['context-bench'],
        options: { max_iterations: iterations, context_threshold: contextThreshold },
        ...(effects === undefined ? {} : { effects }),
      },
    ],
    redis: { url, prefix, shards: 1 },
    worker: { concurrency: 4 },
  });
  return { config, path: '<bench>', configDir: process.cwd() } satisfies LoadedConfig;
}

export async function measureContextTokens(
  url: string,
  iterations: number,
  label: string,
  effects: unknown[] | undefined,
): Promise<ContextTokensResult> {
  const prefix = scratchPrefix();
  const loaded = configOf(url, prefix, iterations, effects);
  const logger = silentLogger();
  const worker = new RatchetWorker({ loaded, toolboxes: [largeToolbox()], logger });
  const redis = createRedis({ url, logger, name: 'bench-context' });
  const engine = createBenchEngine(loaded, redis);
  try {
    await worker.start();
    const { runId, sessionId } = await engine.startRun({ input: 'collect every result' });
    const run = await engine.waitForRun(runId, { timeoutMs: 300_000 });
    if (run.status !== 'completed') throw new Error(`context bench run ${run.status}: ${run.error?.message}`);
    const chat = await engine.readChat(sessionId);
    const events = await engine.readEvents(sessionId);
    const tokens = chat
      .filter((message) => message.role === 'assistant')
      .map((message) => (message.metadata.usage as { input_tokens: number }).input_tokens);
    return {
      label,
      tokens,
      compactions: events.filter((event) => event.kind === 'compaction').length,
      transcriptLength: chat.length,
    };
  } finally {
    await worker.close();
    await engine.close();
    await closeRedis(redis);
    await deleteScratchKeys(url, prefix);
  }
}

/** A table of tokens sent at every tenth iteration, then the largest and the mean. */
export function formatContextTokens(results: readonly ContextTokensResult[]): string {
  const length = Math.max(...results.map((result) => result.tokens.length));
  const marks = [1, ...Array.from({ length: Math.floor(length / 10) }, (_, index) => (index + 1) * 10)];
  const width = Math.max(...results.map((result) => result.label.length));
  const header = `${'iteration'.padEnd(width)} ${marks.map((mark) => String(mark).padStart(7)).join('')}    max   mean  compactions  transcript`;
  const lines = results.map((result) => {
    const at = marks.map((mark) => String(result.tokens[mark - 1] ?? '').padStart(7)).join('');
    const max = Math.max(...result.tokens);
    const mean = Math.round(result.tokens.reduce((sum, value) => sum + value, 0) / result.tokens.length);
    return `${result.label.padEnd(width)} ${at} ${String(max).padStart(6)} ${String(mean).padStart(6)} ${String(result.compactions).padStart(12)} ${String(result.transcriptLength).padStart(11)}`;
  });
  return [
    `D. tokens sent per iteration, ${length}-iteration run, ${resultChars}-character tool results, window ${contextWindow}, threshold ${contextThreshold}`,
    header,
    ...lines,
  ].join('\n');
}

/**
 * With effects, no request may pass the threshold by more than one iteration's growth (a request is planned
 * before its own reply and result are added): the count stays flat instead of growing with the run.
 */
export function contextTarget(withEffects: ContextTokensResult): {
  label: string;
  measured: string;
  limit: string;
  pass: boolean;
} {
  const max = Math.max(...withEffects.tokens);
  const limit = Math.round(contextWindow * contextThreshold + resultChars / 4 + 200);
  return {
    label: `tokens sent per iteration with effects, largest of ${withEffects.tokens.length}`,
    measured: `${max} tokens`,
    limit: `≤ ${limit} (threshold × window + one iteration)`,
    pass: max <= limit,
  };
}
