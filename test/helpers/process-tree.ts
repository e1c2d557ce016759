import { existsSync, readdirSync, readFileSync } from 'node:fs';

/** Running (a killed process whose parent died may stay a zombie until init reaps it: that is not alive). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, 'utf8') : '';
  return !/^\d+ \(.*\) Z/.test(stat);
}

/** The processes started under `pid`, at any depth, as /proc shows them now. */
export function descendantsOf(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The parent is the 2nd field after the command's closing parenthesis (the command may hold spaces).
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Ended while listed.
    }
  }
  const found: number[] = [];
  const queue = [pid];
  for (let parent = queue.shift(); parent !== undefined; parent = queue.shift()) {
    for (const [child, of] of parents) {
      if (of !== parent) continue;
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}
