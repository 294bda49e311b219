// Whether the service traces (OpenTelemetry Environment Variable Specification: OTEL_SDK_DISABLED,
// OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT), and the SDK started when it does. The SDK's modules
// (about 27 MB resident) are loaded only then: a service that does not trace does not carry them.
import type { Tracing } from './sdk-start.js';

type Env = Readonly<Record<string, string | undefined>>;

/** Whether the environment asks for traces: an OTLP endpoint or OTEL_TRACES_EXPORTER, unless disabled. */
function tracingRequested(env: Env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter === 'none') return false;
  return Boolean(exporter || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/** Tracing as the environment asks, or null (nothing loaded or registered: the request path stays as without it). */
export async function startTracing(env: Env, version: string): Promise<Tracing | null> {
  if (!tracingRequested(env)) return null;
  const { startSdk } = await import('./sdk-start.js');
  return startSdk(env, version);
}
