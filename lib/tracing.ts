/**
 * An OpenTelemetry tracer for one process (ADR 0013): spans batched to one exporter, tagged with the process's
 * service name. Only loaded when tracing is configured; nothing here knows Temporal or plans (the interceptors that
 * use the tracer are wired in client/plans.ts and worker/tracing.ts).
 */
import { context, propagation } from '@opentelemetry/api';
import type { Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';

export interface Tracing {
  tracer: Tracer;
  /** Where spans made outside this tracer (the workflow sandbox's, handed over by a sink) join its batches. */
  spanProcessor: SpanProcessor;
  /** The process's resource (service name, SDK), for spans made outside this tracer. */
  resource: Resource;
  /** Exports every ended span now. */
  flush(): Promise<void>;
  /** Flushes, then stops: a process calls it once, before it exits. */
  shutdown(): Promise<void>;
}

export function startTracing(options: { serviceName: string; exporter: SpanExporter }): Tracing {
  registerContextPropagation();
  const resource = Resource.default().merge(
    new Resource({ 'service.name': options.serviceName }),
  ) as Resource;
  // Batched: a span costs the traced code a queue push, never a request.
  const spanProcessor = new BatchSpanProcessor(options.exporter);
  const provider = new BasicTracerProvider({
    resource,
    mergeResourceWithDefaults: false,
    spanProcessors: [spanProcessor],
  });
  return {
    // Handed to each interceptor rather than registered globally: two tracers in one process (the tests run the
    // CLI and a worker together) keep their own service names.
    tracer: provider.getTracer('cleveragents'),
    spanProcessor,
    resource,
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}

/** OTLP over HTTP (JSON bodies) to this URL; OTEL_EXPORTER_OTLP_HEADERS and _TIMEOUT apply as the spec says. */
export function otlpTraceExporter(url: string): SpanExporter {
  return new OTLPTraceExporter({ url });
}

let registered = false;

/**
 * Temporal's interceptors find the current span through OpenTelemetry's global context and carry it across
 * processes with the global propagator: without a context manager every span would be a root, and without a
 * propagator no trace would reach the workflow. Registered once per process; one registered already (by an
 * application embedding the client) is kept.
 */
function registerContextPropagation(): void {
  if (registered) return;
  registered = true;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
}
