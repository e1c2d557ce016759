import { afterEach, expect, it } from 'vitest';
import { createLogger } from '../../src/log/index.js';
import { ApiHarness } from './api-harness.js';

// An API built from a config object (not loadConfig's) registers its tokens too: a client that puts a token
// in a query string (as the queue board's `?token=` does) finds it in no log line.

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

it('an API given a config object hides its api.tokens in the request log', async () => {
  const token = 'object-path-token-0123456789abcdef';
  const lines: string[] = [];
  // The harness's API gets `api` merged into the loaded config's object: the token never went through a loader.
  api = await ApiHarness.start({
    script: { default: { text: 'ok' } },
    worker: false,
    api: { tokens: [token] },
    logger: createLogger({ level: 'info', destination: { write: (line: string) => lines.push(line) } }),
  });
  const response = await api.request('GET', `/v1/runs?token=${token}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(response.status).toBe(400);
  const logged = lines.join('');
  expect(logged).toContain('token=[redacted]');
  expect(logged).not.toContain(token);
});
