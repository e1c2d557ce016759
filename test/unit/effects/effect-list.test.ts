import { describe, expect, it } from 'vitest';
import type { EffectConfig } from '../../../src/config/index.js';
import { resolveEffects } from '../../../src/workflows/core/effects/index.js';

describe('the effects an agent runs', () => {
  it('are trim_tool_results and compact at options.context_threshold when the config names none', () => {
    expect(resolveEffects({ configured: undefined, contextWindow: 128_000, contextThreshold: 0.8 })).toEqual([
      { kind: 'trim_tool_results', params: { max_result_length: 2000, preserve_recent: 4 } },
      { kind: 'compact', params: { threshold: 0.8 } },
    ]);
    expect(
      resolveEffects({ configured: undefined, contextWindow: 128_000, contextThreshold: 0.5 }).at(-1),
    ).toEqual({ kind: 'compact', params: { threshold: 0.5 } });
  });

  it('are none by default when the context window is 0, and none when the config gives an empty list', () => {
    expect(resolveEffects({ configured: undefined, contextWindow: 0, contextThreshold: 0.8 })).toEqual([]);
    expect(resolveEffects({ configured: [], contextWindow: 200_000, contextThreshold: 0.8 })).toEqual([]);
  });

  it('run shrinking effects before the ones that add messages, compact last of those, config order within a kind', () => {
    const configured: EffectConfig[] = [
      { kind: 'progress', params: { interval: 5 } },
      { kind: 'loop_detect', params: { threshold: 3, window_size: 6 } },
      { kind: 'compact', params: {} },
      { kind: 'reflection', params: { failure_threshold: 2 } },
      {
        kind: 'sliding_window',
        params: { threshold: 0.7, recent_zone: 8, medium_zone: 8, trim_length: 200 },
      },
      { kind: 'trim_tool_results', params: { max_result_length: 100, preserve_recent: 1 } },
      { kind: 'observation_mask', params: { threshold: 0.6, recent_window: 4 } },
      { kind: 'trim_tool_results', params: { max_result_length: 50, preserve_recent: 2 } },
    ];
    const resolved = resolveEffects({ configured, contextWindow: 1000, contextThreshold: 0.9 });
    expect(resolved.map((effect) => effect.kind)).toEqual([
      'trim_tool_results',
      'trim_tool_results',
      'observation_mask',
      'sliding_window',
      'compact',
      'loop_detect',
      'reflection',
      'progress',
    ]);
    expect(resolved[0]?.params).toEqual({ max_result_length: 100, preserve_recent: 1 });
    expect(resolved[1]?.params).toEqual({ max_result_length: 50, preserve_recent: 2 });
    // A compact without a threshold takes the agent's context_threshold; an explicit one wins.
    expect(resolved[4]).toEqual({ kind: 'compact', params: { threshold: 0.9 } });
    expect(
      resolveEffects({
        configured: [{ kind: 'compact', params: { threshold: 0.6 } }],
        contextWindow: 1000,
        contextThreshold: 0.9,
      }),
    ).toEqual([{ kind: 'compact', params: { threshold: 0.6 } }]);
  });
});
