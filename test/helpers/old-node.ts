import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { unsupportedNodeMessage } from '../../src/worker/node-version.js';

const repoRoot = resolve(import.meta.dirname, '../..');
const tools = join(repoRoot, '.tools');

function versionOf(binary: string): string | undefined {
  const result = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim().replace(/^v/, '') : undefined;
}

function isUnsupported(binary: string): boolean {
  const version = versionOf(binary);
  return version !== undefined && unsupportedNodeMessage(version) !== undefined;
}

/**
 * A real Node.js that Ratchet does not support, to test its refusal: the machine's /usr/bin/node when it is one
 * (Debian's is 20), else one unpacked under .tools/ before, else node-linux-<arch>@20 fetched from the npm
 * registry into .tools/ as .ci/run fetches the Node versions it runs on.
 */
export function unsupportedNode(): string {
  if (existsSync('/usr/bin/node') && isUnsupported('/usr/bin/node')) return '/usr/bin/node';
  const unpacked = existsSync(tools)
    ? readdirSync(tools)
        .filter((name) => name.startsWith('node-'))
        .map((name) => join(tools, name, 'bin/node'))
    : [];
  const found = unpacked.find((binary) => existsSync(binary) && isUnsupported(binary));
  if (found) return found;

  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
  const dir = join(tools, 'node-20');
  mkdirSync(dir, { recursive: true });
  const pack = spawnSync('npm', ['pack', '--silent', `node-linux-${arch}@20`], {
    cwd: dir,
    encoding: 'utf8',
  });
  const tarball = pack.stdout.trim().split('\n').at(-1);
  if (pack.status !== 0 || !tarball) {
    throw new Error(
      `no unsupported Node.js to test with: npm pack node-linux-${arch}@20 failed: ${pack.stderr}`,
    );
  }
  const unpack = spawnSync('tar', ['xzf', tarball, '--strip-components=1'], { cwd: dir, encoding: 'utf8' });
  if (unpack.status !== 0) throw new Error(`unpacking ${tarball} failed: ${unpack.stderr}`);
  return join(dir, 'bin/node');
}
