// Adds lock entries for optional platform packages that this machine's registry does not serve.
//
// The npm registry reachable here answers 404 for some platform-specific optional packages (for example
// @biomejs/cli-darwin-arm64). `npm install` then writes a package-lock.json without them, and `npm ci` rejects
// that lock ("Missing: ... from lock file"). Such packages are never installed on another platform, so an
// entry with the right os/cpu is all npm ci needs. Run after any `npm install` that changes the lock.
import { readFileSync, writeFileSync } from 'node:fs';

const lockPath = 'package-lock.json';
const lock = JSON.parse(readFileSync(lockPath, 'utf8'));
const platforms = ['android', 'darwin', 'freebsd', 'linux', 'openbsd', 'sunos', 'win32', 'aix', 'netbsd'];
const cpus = ['arm64', 'x64', 'arm', 'ia32', 'ppc64', 's390x', 'riscv64', 'loong64', 'mips64el'];

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = platforms.find((platform) => parts.includes(platform));
  const cpu = cpus.find((candidate) => parts.includes(candidate));
  if (!os || !cpu) return undefined;
  return { os: [os], cpu: [cpu], ...(parts.includes('musl') ? { libc: ['musl'] } : {}) };
}

let added = 0;
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const nested = `${path}/node_modules/${name}`;
    const hoisted = `node_modules/${name}`;
    if (lock.packages[nested] || lock.packages[hoisted]) continue;
    const platform = platformOf(name);
    if (!platform) continue;
    lock.packages[hoisted] = { version, optional: true, ...platform };
    added += 1;
  }
}
const sorted = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
lock.packages = sorted;
writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${added} platform entries`);
