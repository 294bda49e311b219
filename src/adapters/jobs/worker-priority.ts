// A job-worker process's scheduling priority (POSIX nice; Linux keeps one per thread, setpriority(2) on a thread id).
import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** This process's thread ids: every one on Linux (/proc/self/task), elsewhere only the main thread's. */
function threadIds(): number[] {
  try {
    return readdirSync('/proc/self/task').map(Number);
  } catch {
    return [process.pid];
  }
}

/**
 * Every thread of this process at least as nice as `nice` (0: left as started); returns how many were lowered. A
 * thread inherits its creator's value, but V8's helper threads start before this runs, so each one is set by its id;
 * threads started later (libuv's pool) inherit the main thread's. A thread already nicer (the process started under
 * `nice`) is left alone, and one that ends meanwhile is skipped.
 */
export function lowerThreadPriorities(nice: number): number {
  if (nice <= 0) return 0;
  let lowered = 0;
  for (const tid of threadIds()) {
    try {
      if (getPriority(tid) >= nice) continue;
      setPriority(tid, nice);
      lowered++;
    } catch {
      // The thread ended between the listing and here.
    }
  }
  return lowered;
}
