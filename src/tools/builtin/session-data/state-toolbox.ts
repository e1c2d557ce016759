import { z } from 'zod';
import { parseJsonRecord } from '../../../schemas/parse.js';
import { defineTool, type JsonValue } from '../../tool.js';
import { createToolBox, type ToolBox } from '../../toolbox.js';
import { boundedJson, nameSchema, sessionDataLimits } from './session-data.js';

const keyInput = nameSchema('state key').describe('the key');

/** Values are stored as the JSON the tool wrote; anything else under the key is a broken record. */
function parseValue(text: string, key: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    throw new Error(`the value of state key "${key}" is not valid JSON`);
  }
}

/** A key's watchers as state-watch.lua lists them (bare job ids were written before deadlines were kept). */
const watchersSchema = z.array(
  z.union([z.string(), z.strictObject({ job: z.string(), deadline: z.number() })]),
);

function watcherJobIds(text: string): string[] {
  return parseJsonRecord(watchersSchema, text, 'state watchers').map((watcher) =>
    typeof watcher === 'string' ? watcher : watcher.job,
  );
}

const stateGet = defineTool({
  name: 'state_get',
  description: "Reads a key of the session's shared state (a blackboard every agent of the session sees).",
  inputSchema: z.strictObject({ key: keyInput }),
  idempotent: true,
  handler: async (context, input): Promise<JsonValue> => {
    const text = await context.session.data.readState(input.key);
    if (text === null) return { found: false, key: input.key };
    return { found: true, key: input.key, value: parseValue(text, input.key) };
  },
});

const stateSet = defineTool({
  name: 'state_set',
  description:
    "Sets a key of the session's shared state to a JSON value (replacing what was there); agents waiting " +
    'for the key with state_watch get it at once.',
  inputSchema: z.strictObject({
    key: keyInput,
    value: z.unknown().describe('any JSON value'),
  }),
  // Setting the same value again changes nothing.
  idempotent: true,
  handler: async (context, input): Promise<JsonValue> => {
    const set = await context.session.data.setState(
      input.key,
      boundedJson(input.value, 'value'),
      sessionDataLimits.stateKeys,
    );
    if (set.kind === 'full') {
      throw new Error(
        `the session's state holds ${set.keys} keys, the most it may: overwrite an existing key instead of ` +
          `adding "${input.key}"`,
      );
    }
    for (const jobId of watcherJobIds(set.watchers)) await context.session.wake(jobId);
    return { ok: true, key: input.key };
  },
});

const stateDelete = defineTool({
  name: 'state_delete',
  description:
    "Deletes a key of the session's shared state. Says whether the key was set; deleting a key that is not " +
    'set changes nothing.',
  inputSchema: z.strictObject({ key: keyInput }),
  // Recorded per call: run again after a crash, the call gets its first answer and deletes nothing more.
  idempotent: true,
  handler: async (context, input): Promise<JsonValue> => {
    const deleted = await context.session.data.deleteState({
      key: input.key,
      callKey: context.idempotencyKey,
      keptAnswers: sessionDataLimits.deleteAnswers,
    });
    return { ok: true, key: input.key, deleted };
  },
});

const stateList = defineTool({
  name: 'state_list',
  description: "Lists the keys of the session's shared state.",
  inputSchema: z.strictObject({}),
  idempotent: true,
  handler: async (context) => {
    const keys = await context.session.data.stateKeys();
    return { keys: keys.sort() };
  },
});

const stateWatch = defineTool({
  name: 'state_watch',
  description:
    "Waits until a key of the session's shared state is set (by another agent), then returns its value. " +
    'Returns at once when it is set already; waiting holds no resources.',
  inputSchema: z.strictObject({
    key: keyInput,
    timeout_s: z
      .number()
      .positive()
      .max(sessionDataLimits.watchTimeoutS)
      .default(300)
      .describe('give up after this many seconds (default 300)'),
  }),
  // Only looks: every execution of the call waits for the same deadline and finds the same value.
  idempotent: true,
  handler: async (context, input): Promise<JsonValue> => {
    const { session } = context;
    const nowMs = session.now().getTime();
    const watch = await session.data.watchState({
      key: input.key,
      jobId: session.jobId,
      callKey: context.idempotencyKey,
      deadlineMs: nowMs + input.timeout_s * 1000,
      nowMs,
    });
    if (watch.kind === 'found')
      return { found: true, key: input.key, value: parseValue(watch.json, input.key) };
    if (watch.kind === 'timed_out') return { found: false, timed_out: true, key: input.key };
    // Parked until the key is set (state_set wakes the step) or the deadline. A set between this look and the
    // parking finds the step still running: the check after parking catches it; the recheck_ms is a safety net.
    const isSet = () => session.data.hasState(input.key);
    throw await session.park(
      Math.min(watch.deadlineMs, nowMs + session.recheckMs),
      `state key "${input.key}"`,
      isSet,
    );
  },
});

/** `state`: a key-value blackboard shared by the agents of one session, kept in Redis. */
export function stateToolbox(): ToolBox {
  return createToolBox('state', [stateGet, stateSet, stateDelete, stateList, stateWatch]);
}
