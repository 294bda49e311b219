// When tracing starts (OpenTelemetry Environment Variable Specification): off unless an OTLP endpoint or an exporter is
// named, OTEL_SDK_DISABLED wins, and a value the service cannot honour stops the boot naming its variable.
import { describe, expect, it } from 'vitest';
import { startTracing } from '../../src/adapters/tracing/sdk.js';
import { ConfigError } from '../../src/errors.js';

describe('startTracing', () => {
  it.each([
    ['nothing set', {}],
    ['the exporter none', { OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }],
    ['the SDK disabled', { OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }],
    ['an empty endpoint', { OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }],
  ])('is off with %s', async (_, env) => {
    expect(await startTracing(env, '1.0.0')).toBeNull();
  });

  it.each([
    ['OTEL_TRACES_EXPORTER', { OTEL_TRACES_EXPORTER: 'zipkin' }],
    ['OTEL_EXPORTER_OTLP_PROTOCOL', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }],
    ['OTEL_TRACES_SAMPLER', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_SAMPLER: 'sometimes' }],
    ['OTEL_TRACES_SAMPLER_ARG', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' }],
    ['OTEL_BSP_SCHEDULE_DELAY', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_BSP_SCHEDULE_DELAY: 'soon' }],
  ])('stops the boot naming %s', async (variable, env) => {
    const failure = startTracing(env, '1.0.0');
    await expect(failure).rejects.toBeInstanceOf(ConfigError);
    await expect(failure).rejects.toMatchObject({ variable });
  });
});
