// A process's threads' scheduling priority (POSIX nice; Linux keeps one per thread, setpriority(2) on a thread id).
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** This process's thread ids: every one on Linux (/proc/self/task), elsewhere only the main thread's. */
function threadIds(): number[] {
  try {
    return readdirSync('/proc/self/task').map(Number);
  } catch {
    return [process.pid];
  }
}

/** A thread's name (proc(5) comm: what the runtime named it, e.g. V8's helpers "V8Worker"); '' once it ended. */
function threadName(tid: number): string {
  try {
    return readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/**
 * Every thread of this process (or those whose name `which` accepts) at least as nice as `nice` (0: left as started);
 * returns how many were lowered. A thread inherits its creator's value, but V8's helper threads start before this
 * runs, so each one is set by its id; threads started later (libuv's pool) inherit the main thread's. A thread
 * already nicer (the process started under `nice`) is left alone, and one that ends meanwhile is skipped.
 */
export function lowerThreadPriorities(nice: number, which: (name: string) => boolean = () => true): number {
  if (nice <= 0) return 0;
  let lowered = 0;
  for (const tid of threadIds()) {
    try {
      if (getPriority(tid) >= nice || !which(threadName(tid))) continue;
      setPriority(tid, nice);
      lowered++;
    } catch {
      // The thread ended between the listing and here.
    }
  }
  return lowered;
}
