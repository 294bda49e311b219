// OpenTelemetry tracing set-up from the OTel environment variables (OpenTelemetry Environment Variable
// Specification): the SDK's tracer provider, OTLP/HTTP protobuf export, W3C Trace Context propagation. Loaded by
// sdk.ts only when the environment asks for traces.
import { context, propagation, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { ConfigError } from '../../errors.js';
import { setTracer } from './spans.js';

const DEFAULT_SERVICE_NAME = 'validation-api';

export interface Tracing {
  tracer: Tracer;
  /** Export what is buffered and stop (on shutdown, after the server drained). */
  shutdown(): Promise<void>;
}

type Env = Readonly<Record<string, string | undefined>>;

function exporterFrom(env: Env): SpanExporter {
  const name = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() || 'otlp';
  if (name === 'console') return new ConsoleSpanExporter();
  if (name !== 'otlp') throw new ConfigError('OTEL_TRACES_EXPORTER', `must be otlp, console or none, got "${name}"`);
  for (const variable of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL'] as const) {
    const protocol = env[variable]?.trim();
    if (protocol && protocol !== 'http/protobuf') throw new ConfigError(variable, `only http/protobuf is supported, got "${protocol}"`);
  }
  // The exporter reads the endpoint, headers, timeout and compression from OTEL_EXPORTER_OTLP_* itself.
  return new OTLPTraceExporter();
}

function samplerFrom(env: Env): Sampler {
  const name = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || 'parentbased_always_on';
  const ratio = () => {
    const raw = env.OTEL_TRACES_SAMPLER_ARG?.trim() ?? '1';
    const r = Number(raw);
    if (!(r >= 0 && r <= 1)) throw new ConfigError('OTEL_TRACES_SAMPLER_ARG', `must be a ratio from 0 to 1, got "${raw}"`);
    return new TraceIdRatioBasedSampler(r);
  };
  switch (name) {
    case 'always_on': return new AlwaysOnSampler();
    case 'always_off': return new AlwaysOffSampler();
    case 'traceidratio': return ratio();
    case 'parentbased_always_on': return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off': return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio': return new ParentBasedSampler({ root: ratio() });
    default: throw new ConfigError('OTEL_TRACES_SAMPLER', `unsupported sampler "${name}"`);
  }
}

/**
 * Tracing as the environment asks. Registers the tracer provider, the AsyncLocalStorage context manager and the W3C
 * Trace Context propagator globally.
 */
export function startSdk(env: Env, version: string): Tracing {
  const exporter = exporterFrom(env);
  const sampler = samplerFrom(env);
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (envDetector) take precedence over the defaults.
  const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: DEFAULT_SERVICE_NAME, [ATTR_SERVICE_VERSION]: version }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  // OTEL_BSP_SCHEDULE_DELAY: how long spans wait to be sent in a batch (the spec's default, 5 s, otherwise).
  const delay = Number(env.OTEL_BSP_SCHEDULE_DELAY ?? 5000);
  if (!(delay >= 0)) throw new ConfigError('OTEL_BSP_SCHEDULE_DELAY', `must be milliseconds, got "${env.OTEL_BSP_SCHEDULE_DELAY}"`);
  const provider = new TracerProvider({ resource, sampler, spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: delay })] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  const tracer = provider.getTracer(DEFAULT_SERVICE_NAME, version);
  setTracer(tracer);
  return {
    tracer,
    async shutdown() {
      setTracer(null);
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
