import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/index.js';
// Registers the built-in provider kinds, as a worker does.
import '../../src/models/index.js';

// No Docker engine runs on our machines, so the image and compose files are checked as text: the settings a
// container needs to work are present, and the config the image runs resolves its workspace outside the
// read-only config mount.
const repoRoot = resolve(import.meta.dirname, '../..');
const dockerfile = readFileSync(resolve(repoRoot, 'Dockerfile'), 'utf8');
const compose = parse(readFileSync(resolve(repoRoot, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, { volumes?: string[]; security_opt?: string[]; command?: string[] }>;
  volumes: Record<string, unknown>;
};

function imageEnv(name: string): string | undefined {
  const match = new RegExp(`^ENV .*\\b${name}=(\\S+)`, 'm').exec(dockerfile);
  return match?.[1];
}

describe('the container image and docker-compose.yml', () => {
  it('build on the Node line .nvmrc names', () => {
    const major = readFileSync(resolve(repoRoot, '.nvmrc'), 'utf8').trim().split('.')[0];
    const bases = [...dockerfile.matchAll(/^FROM node:(\d+)/gm)].map((match) => match[1]);
    expect(bases.length).toBeGreaterThan(0);
    for (const base of bases) expect(base).toBe(major);
  });

  it('give the agents a workspace the image user owns, outside the read-only config mount', () => {
    const workspace = imageEnv('RATCHET_WORKSPACE');
    expect(workspace).toBe('/workspace');
    expect(dockerfile).toMatch(/chown node:node \/workspace/);
    expect(dockerfile).toMatch(/^USER node$/m);
    for (const service of ['api', 'worker']) {
      const volumes = compose.services[service]?.volumes ?? [];
      expect(volumes).toContain('./config:/app/config:ro');
    }
    expect(compose.services.worker?.volumes).toContain('workspace:/workspace');
    expect(compose.volumes).toHaveProperty('workspace');
    // The config compose runs, loaded with the image's environment: its toolboxes work under /workspace.
    const loaded = loadConfig(resolve(repoRoot, 'config/ratchet.yaml'), {
      env: { RATCHET_WORKSPACE: workspace },
    });
    // (How the toolboxes resolve it: src/tools/builtin/index.ts.)
    expect(resolve(loaded.configDir, loaded.config.tools.workspace)).toBe('/workspace');
  });

  it('let bubblewrap make its namespaces in the worker, and carry bubblewrap and git', () => {
    expect(compose.services.worker?.security_opt).toContain('seccomp=unconfined');
    expect(dockerfile).toMatch(/apt-get install[^\n]*\bbubblewrap\b[^\n]*\bgit\b/);
  });
});
