import type { Subscription } from 'rxjs';
import type { DemiurgeApp } from '../app.js';

/** The OpenTelemetry export of a host, when `OTEL_*` configures one. */
export interface HostTelemetry {
  /** Ends the open spans, flushes and shuts the exporter down. */
  close(): Promise<void>;
}

/** Whether the standard environment asks for trace export (an OTLP endpoint or an exporter, not disabled). */
export function telemetryRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return false;
  return Boolean(
    env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_TRACES_EXPORTER === 'otlp',
  );
}

/**
 * Exports spans of the host's committed events ({@link EventSpans}) over OTLP/HTTP, configured by the standard
 * `OTEL_*` variables (endpoint, headers, `OTEL_SERVICE_NAME`, `OTEL_BSP_*`). Off, and nothing loaded, when
 * none asks for it: resolves undefined.
 */
export async function startTelemetry(
  app: DemiurgeApp,
  env: NodeJS.ProcessEnv = process.env,
): Promise<HostTelemetry | undefined> {
  if (!telemetryRequested(env)) return undefined;
  const [
    { BasicTracerProvider, BatchSpanProcessor },
    { OTLPTraceExporter },
    { resourceFromAttributes },
    { EventSpans },
  ] = await Promise.all([
    named(import('@opentelemetry/sdk-trace-base')),
    named(import('@opentelemetry/exporter-trace-otlp-http')),
    named(import('@opentelemetry/resources')),
    import('./event-spans.js'),
  ]);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      'service.name': env.OTEL_SERVICE_NAME ?? 'demiurge',
      'service.instance.id': app.owner,
    }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  const spans = new EventSpans(provider.getTracer('demiurge'));
  const sub: Subscription = app.store.events$.subscribe((e) => spans.onEvent(e));
  return {
    async close() {
      sub.unsubscribe();
      spans.endAll();
      await provider.forceFlush();
      await provider.shutdown();
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
