// Session slots of the SMTP verifier: at most `perAddress` sessions to one server address (the IP dialled, whatever
// MX names point at it) and at most `total` in the process; waiters queued in order, a cancelled wait leaves the queue.
// With a shared layer (Redis: redis-address-leases.ts) the per-address limit holds across every process too.

export interface SessionSlots {
  /**
   * Wait for a slot of `address` and one of the process; the returned function gives both back (once). Rejects with
   * the signal's reason when it aborts first, holding nothing.
   */
  acquire(address: string, signal?: AbortSignal): Promise<() => void>;
  /** Slots of `address` held now (tests). */
  held(address: string): number;
  /** Sessions of the process holding a slot now (the in-flight gauge). */
  inFlight(): number;
}

/** A counting semaphore per key: `limit` holders of a key at once. */
class KeyedSemaphore {
  private readonly state = new Map<string, { held: number; queue: Array<() => void> }>();

  constructor(private readonly limit: number) {}

  async take(key: string, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    let s = this.state.get(key);
    if (!s) this.state.set(key, (s = { held: 0, queue: [] }));
    if (s.held < this.limit) {
      s.held++;
      return;
    }
    const queue = s.queue;
    await new Promise<void>((resolve, reject) => {
      const granted = (): void => {
        signal?.removeEventListener('abort', cancel);
        resolve();
      };
      const cancel = (): void => {
        queue.splice(queue.indexOf(granted), 1);
        reject(signal!.reason);
      };
      queue.push(granted);
      signal?.addEventListener('abort', cancel, { once: true });
    });
  }

  give(key: string): void {
    const s = this.state.get(key)!;
    const next = s.queue.shift();
    if (next) next(); // the slot passes straight to the next in line
    else if (--s.held === 0) this.state.delete(key);
  }

  held(key: string): number {
    return this.state.get(key)?.held ?? 0;
  }
}

/**
 * The per-address slots every process shares (docs/adr/0033-shared-smtp-limits.md): `take` resolves with a function
 * that gives the slot back, or rejects with the signal's reason (or SlotsUnavailableError when the store could not be
 * reached before the signal aborted).
 */
export interface SharedAddressSlots {
  take(address: string, signal?: AbortSignal): Promise<() => void>;
}

/** The shared slots' store (Redis) stayed unreachable until the verification's deadline: no server was asked. */
export class SlotsUnavailableError extends Error {
  override name = 'SlotsUnavailableError';
}

const PROCESS = '';

export function createSessionSlots(perAddress: number, total: number, shared?: SharedAddressSlots): SessionSlots {
  const byAddress = new KeyedSemaphore(perAddress);
  const all = new KeyedSemaphore(total);
  return {
    async acquire(address, signal) {
      // The address first (here, then across processes): a session waiting for a busy server holds none of the
      // process's slots meanwhile, and only the head of this process's queue asks the shared store.
      await byAddress.take(address, signal);
      let giveShared = (): void => undefined;
      try {
        if (shared) giveShared = await shared.take(address, signal);
        await all.take(PROCESS, signal);
      } catch (err) {
        giveShared();
        byAddress.give(address);
        throw err;
      }
      let released = false;
      return () => {
        if (released) return;
        released = true;
        all.give(PROCESS);
        giveShared();
        byAddress.give(address);
      };
    },
    held: (address) => byAddress.held(address),
    inFlight: () => all.held(PROCESS),
  };
}
