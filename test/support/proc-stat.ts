// Linux /proc/PID/stat and /proc/PID/task/TID/stat (proc(5)), read for tests and the bench.
import { readdirSync, readFileSync } from 'node:fs';

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

/** Each thread of `pid`: its name (comm) and nice value (stat field [16]); a thread that ended meanwhile is left out. */
export function threadsOf(pid: number): Array<{ name: string; nice: number }> {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
    const stat = statFields(`/proc/${pid}/task/${tid}/stat`);
    let name: string;
    try {
      name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
    } catch {
      return [];
    }
    return stat === null ? [] : [{ name, nice: Number(stat[16]) }];
  });
}
