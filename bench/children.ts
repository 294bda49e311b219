// Child processes of a bench run: every one is killed when the bench exits, even on a crash or Ctrl-C.
import type { ChildProcess } from 'node:child_process';

const live = new Set<ChildProcess>();

process.on('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`\nbench: ${signal}, stopping ${live.size} child process(es)\n`);
    process.exit(130);
  });
}

/** Register a child so that it does not outlive the bench. */
export function track(child: ChildProcess): ChildProcess {
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** A bench script's main: its error (with the stack) on stderr and exit 1, else exit with process.exitCode (children killed). */
export function runBench(name: string, main: () => Promise<void>): void {
  main().then(
    () => process.exit(process.exitCode ?? 0),
    (err: unknown) => {
      process.stderr.write(`${name}: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
