import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { supportedNode, unsupportedNodeMessage } from '../../src/worker/node-version.js';

const repoRoot = resolve(import.meta.dirname, '../..');

describe('the supported Node.js versions', () => {
  it('are 22 from 22.18, and 24 and later; older ones and the odd line 23 are refused', () => {
    for (const version of ['22.18.0', '22.23.5', '24.0.0', '24.21.0', '25.2.1', '26.0.0']) {
      expect(unsupportedNodeMessage(version), version).toBeUndefined();
    }
    for (const version of ['16.20.2', '18.20.8', '20.19.5', '21.7.3', '22.0.0', '22.17.1', '23.11.1']) {
      expect(unsupportedNodeMessage(version), version).toBeDefined();
    }
  });

  it('are named in the refusal, with how to get one', () => {
    expect(unsupportedNodeMessage('20.19.5')).toBe(
      'Node.js 20.19.5 is not supported: Ratchet runs on Node.js 22 (22.18 or later) or 24 and later, the ' +
        'maintained LTS lines. Install one with your version manager (e.g. `nvm install 24`) or from ' +
        'https://nodejs.org/en/download',
    );
  });

  it("are package.json's engines, and include the version .nvmrc names and the Node 22 CI runs", () => {
    const manifest = JSON.parse(readFileSync(resolve(repoRoot, 'package.json'), 'utf8')) as {
      engines: { node: string };
    };
    expect(manifest.engines.node).toBe(supportedNode.engines);
    const nvmrc = readFileSync(resolve(repoRoot, '.nvmrc'), 'utf8').trim();
    expect(unsupportedNodeMessage(nvmrc)).toBeUndefined();
    const node22 = /^NODE_22=(\S+)$/m.exec(readFileSync(resolve(repoRoot, '.ci/run'), 'utf8'))?.[1];
    expect(node22).toMatch(/^22\.\d+\.\d+$/);
    expect(unsupportedNodeMessage(node22 ?? '')).toBeUndefined();
  });
});
