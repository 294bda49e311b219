// A counting semaphore per key (an MX host): at most `limit` holders of one key at once, the others queued in order.

export interface HostSlots {
  /** Wait for a slot of `key`; the returned function gives it back (call it exactly once). */
  acquire(key: string): Promise<() => void>;
  /** Slots of `key` held now (tests, metrics). */
  held(key: string): number;
}

export function createHostSlots(limit: number): HostSlots {
  const state = new Map<string, { held: number; queue: Array<() => void> }>();

  const release = (key: string): void => {
    const s = state.get(key)!;
    const next = s.queue.shift();
    if (next) next(); // the slot passes straight to the next in line
    else if (--s.held === 0) state.delete(key);
  };

  return {
    async acquire(key) {
      let s = state.get(key);
      if (!s) state.set(key, (s = { held: 0, queue: [] }));
      if (s.held < limit) s.held++;
      else await new Promise<void>((resolve) => s!.queue.push(resolve));
      let released = false;
      return () => {
        if (released) return;
        released = true;
        release(key);
      };
    },
    held: (key) => state.get(key)?.held ?? 0,
  };
}
