// Types for the part of autocannon 9 (HTTP/1.1 load generator) that bench/load.ts uses; the package ships none.
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  interface AutocannonRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
  }

  interface AutocannonOptions {
    url: string;
    connections?: number;
    duration?: number;
    overallRate?: number;
    timeout?: number;
    requests?: AutocannonRequest[];
  }

  interface AutocannonResult {
    errors: number;
    timeouts: number;
    non2xx: number;
    start: Date;
    finish: Date;
  }

  interface Instance extends EventEmitter, PromiseLike<AutocannonResult> {}

  function autocannon(opts: AutocannonOptions): Instance;
  export default autocannon;
}
