// Worker threads' entry modules (Node worker_threads): the module beside the caller, compiled or under tsx.

/**
 * The worker module `name` beside the module at `moduleUrl` (its import.meta.url): .js when compiled, .ts under
 * vitest/tsx, whose threads then need the tsx loader too (compiled JS needs nothing).
 */
export function workerScript(moduleUrl: string, name: string): { filename: URL; execArgv: string[] } {
  const ts = moduleUrl.endsWith('.ts');
  return { filename: new URL(`./${name}${ts ? '.ts' : '.js'}`, moduleUrl), execArgv: ts ? ['--import', 'tsx'] : [] };
}
