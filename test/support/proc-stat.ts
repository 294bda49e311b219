// Linux /proc/PID/stat and /proc/PID/task/TID/stat (proc(5)), read for tests and the bench.
import { readFileSync } from 'node:fs';

/**
 * The fields of a /proc stat file after the command name (which may hold spaces and parentheses): [0] state,
 * [1] ppid, [11] utime, [12] stime, [16] nice. Null once the process or thread ended.
 */
export function statFields(path: string): string[] | null {
  let stat: string;
  try {
    stat = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}
