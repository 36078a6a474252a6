import type { ModelProvider } from '@demiurge/providers';
import type { Subscription } from 'rxjs';
import type { HostStore } from '../store/host-store.js';

/**
 * The OpenTelemetry export of a host, when `OTEL_*` configures one: `createRuntime` hands it the model provider
 * to trace and the store once open; `close` flushes.
 */
export interface HostTelemetry {
  /** Whether spans are exported (`OTEL_TRACES_EXPORTER` not `none`); metrics may be on without them. */
  readonly traces: boolean;
  readonly metrics: boolean;
  /** `provider` with a span per model request (itself when traces are off); `owner` names the host. */
  traceProvider(provider: ModelProvider, owner: string): ModelProvider;
  /**
   * Starts on the host's store: records the trace context in the meta of every event appended through it, and
   * derives spans and metrics from its committed events. `owner` names the host (`service.instance.id`).
   */
  attach(store: HostStore, owner: string): void;
  /** Ends the open spans, exports what is left and shuts the exporters down. */
  close(): Promise<void>;
}

const disabled = (env: NodeJS.ProcessEnv) => env.OTEL_SDK_DISABLED === 'true';

/** Whether the standard environment asks for trace export (an OTLP endpoint or the exporter, not disabled). */
export function tracesRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if (disabled(env) || env.OTEL_TRACES_EXPORTER === 'none') return false;
  return Boolean(
    env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_TRACES_EXPORTER === 'otlp',
  );
}

/** Whether the standard environment asks for metric export (an OTLP endpoint or the exporter, not disabled). */
export function metricsRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if (disabled(env) || env.OTEL_METRICS_EXPORTER === 'none') return false;
  return Boolean(
    env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT || env.OTEL_METRICS_EXPORTER === 'otlp',
  );
}

/** Whether the standard environment asks for any export (traces or metrics). */
export function telemetryRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  return tracesRequested(env) || metricsRequested(env);
}

/**
 * The host's OpenTelemetry export over OTLP/HTTP, configured by the standard `OTEL_*` variables (endpoints,
 * headers, `OTEL_SERVICE_NAME`, `OTEL_BSP_*`, `OTEL_METRIC_EXPORT_INTERVAL`): spans of the committed events
 * ({@link EventSpans}) and of model requests, the trace context in the events' meta, and metrics
 * ({@link EventMetrics}). Off, and nothing loaded, when none asks for it: resolves undefined. Pass the result to
 * `DemiurgeApp.start({ telemetry })`.
 */
export async function startTelemetry(env: NodeJS.ProcessEnv = process.env): Promise<HostTelemetry | undefined> {
  const traces = tracesRequested(env);
  const metrics = metricsRequested(env);
  if (!traces && !metrics) return undefined;
  const [
    { BasicTracerProvider, BatchSpanProcessor },
    { OTLPTraceExporter },
    { MeterProvider, PeriodicExportingMetricReader },
    { OTLPMetricExporter },
    { resourceFromAttributes },
    { EventSpans },
    { EventMetrics },
    { recordTraceMeta },
    { TraceIdSlot },
    { traceModelRequests },
  ] = await Promise.all([
    named(import('@opentelemetry/sdk-trace-base')),
    named(import('@opentelemetry/exporter-trace-otlp-http')),
    named(import('@opentelemetry/sdk-metrics')),
    named(import('@opentelemetry/exporter-metrics-otlp-http')),
    named(import('@opentelemetry/resources')),
    import('./event-spans.js'),
    import('./event-metrics.js'),
    import('./trace-meta.js'),
    import('./trace-ids.js'),
    import('./model-spans.js'),
  ]);
  const ids = new TraceIdSlot();
  let tracerProvider: InstanceType<typeof BasicTracerProvider> | undefined;
  let meterProvider: InstanceType<typeof MeterProvider> | undefined;
  let spans: InstanceType<typeof EventSpans> | undefined;
  const subs: Subscription[] = [];
  const tracer = () => {
    tracerProvider ??= new BasicTracerProvider({
      resource: resource(),
      idGenerator: ids,
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
    });
    return tracerProvider.getTracer('demiurge');
  };
  let owner: string | undefined;
  const resource = () =>
    resourceFromAttributes({
      'service.name': env.OTEL_SERVICE_NAME ?? 'demiurge',
      ...(owner ? { 'service.instance.id': owner } : {}),
    });
  return {
    traces,
    metrics,
    traceProvider(provider, hostOwner) {
      owner ??= hostOwner;
      return traces ? traceModelRequests(provider, tracer()) : provider;
    },
    attach(store, hostOwner) {
      owner ??= hostOwner;
      if (traces) {
        const trace = recordTraceMeta(store);
        spans = new EventSpans(tracer(), ids);
        const events = spans;
        subs.push(
          store.events$.subscribe((e) => {
            trace.observe(e);
            events.onEvent(e);
          }),
        );
      }
      if (metrics) {
        const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL) || 60_000;
        meterProvider = new MeterProvider({
          resource: resource(),
          readers: [
            new PeriodicExportingMetricReader({
              exporter: new OTLPMetricExporter(),
              exportIntervalMillis: interval,
              exportTimeoutMillis: Math.min(Number(env.OTEL_METRIC_EXPORT_TIMEOUT) || 30_000, interval),
            }),
          ],
        });
        const recorder = new EventMetrics(meterProvider.getMeter('demiurge'), store);
        subs.push(store.events$.subscribe((e) => recorder.onEvent(e)));
      }
    },
    async close() {
      for (const sub of subs) sub.unsubscribe();
      spans?.endAll();
      await Promise.all([
        tracerProvider?.forceFlush().then(() => tracerProvider?.shutdown()),
        meterProvider?.forceFlush().then(() => meterProvider?.shutdown()),
      ]);
    },
  };
}

/**
 * A dynamically imported CommonJS module's exports: Node gives them as named exports, the CLI's bundle only
 * as `default` (the OpenTelemetry packages are CommonJS).
 */
async function named<T extends object>(load: Promise<T>): Promise<T> {
  const m = (await load) as T & { default?: unknown };
  return m.default && typeof m.default === 'object' ? ({ ...(m.default as object), ...m } as T) : m;
}
