import { describe, expect, it } from 'vitest';
import { didYouMean, suggest } from '../../src/config/suggest.js';

describe('suggest', () => {
  it('suggests the closest candidate within a small edit distance', () => {
    expect(suggest('defualt', ['fast', 'default', 'slow'])).toBe('default');
    expect(suggest('toolbox', ['toolboxes', 'tools'])).toBe('toolboxes');
    expect(suggest('temprature', ['temperature'])).toBe('temperature');
  });

  it('ignores case', () => {
    expect(suggest('Assistant', ['assistant'])).toBe('assistant');
  });

  it('suggests nothing for unrelated names', () => {
    expect(suggest('zzz', ['default', 'fast'])).toBeUndefined();
    expect(suggest('openai', ['anthropic'])).toBeUndefined();
    expect(suggest('x', [])).toBeUndefined();
  });

  it('allows only one edit for short names', () => {
    expect(suggest('ab', ['xy'])).toBeUndefined();
    expect(suggest('web', ['wbe'])).toBeUndefined();
    expect(suggest('web', ['webs'])).toBe('webs');
  });

  it('prefers the nearest of several close candidates', () => {
    expect(suggest('agent', ['agents', 'agent_x'])).toBe('agents');
  });
});

describe('didYouMean', () => {
  it('renders the hint or nothing', () => {
    expect(didYouMean('defualt', ['default'])).toBe(' (did you mean "default"?)');
    expect(didYouMean('zzz', ['default'])).toBe('');
  });
});
