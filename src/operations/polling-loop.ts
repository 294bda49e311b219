// A background loop over a store: `step` runs until the loop is stopped, and whenever a step finds nothing to do (or
// fails) the loop sleeps `pollMs`; `wake()` ends a sleep early when new work has arrived.

export interface PollingLoop {
  wake(): void;
  /** Stops after the step in progress, if any. */
  stop(): Promise<void>;
}

/** `step` answers whether it found work (then the next step runs at once). */
export function startPollingLoop(step: () => Promise<boolean>, pollMs: number): PollingLoop {
  let stopping = false;
  let wakeUp: (() => void) | null = null;
  const idle = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, pollMs);
      function done() {
        clearTimeout(timer);
        wakeUp = null;
        resolve();
      }
      wakeUp = done;
    });
  const loop = (async () => {
    while (!stopping) if (!(await step())) await idle();
  })();
  return {
    wake: () => wakeUp?.(),
    async stop() {
      stopping = true;
      wakeUp?.();
      await loop;
    },
  };
}
