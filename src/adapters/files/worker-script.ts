// Worker threads' entry modules (Node worker_threads): the module beside the caller, compiled or under tsx.
import { setFlagsFromString } from 'node:v8';

/**
 * The service caps the main thread's young generation on its command line (`--max-semi-space-size`, ADR 0039), and V8
 * sizes every heap created later from that flag too, overriding a thread's resourceLimits (a cap of 4 gave each thread
 * an 8 MB young generation). Set back to 0 ("from the isolate's own limits"); the main thread's heap, sized at
 * start-up, keeps its cap.
 */
function threadsTakeTheirOwnLimits(): void {
  setFlagsFromString('--max-semi-space-size=0');
}

/**
 * The worker module `name` beside the module at `moduleUrl` (its import.meta.url): .js when compiled, .ts under
 * vitest/tsx, whose threads then need the tsx loader too (compiled JS needs nothing). Every thread of ours is started
 * from here, so each one's heap is sized from its own resourceLimits, whichever thread the process starts first.
 */
export function workerScript(moduleUrl: string, name: string): { filename: URL; execArgv: string[] } {
  threadsTakeTheirOwnLimits();
  const ts = moduleUrl.endsWith('.ts');
  return { filename: new URL(`./${name}${ts ? '.ts' : '.js'}`, moduleUrl), execArgv: ts ? ['--import', 'tsx'] : [] };
}
