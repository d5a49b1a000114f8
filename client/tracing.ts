/**
 * The client's half of a plan's trace (ADR 0013): `plan use` is the root span, the start carries it into the
 * workflow, and later commands on the plan (advance, retry, correct, cancel) join the same trace, under that root,
 * through the trace context kept in the workflow's memo. Loaded by client/plans.ts only when tracing is on.
 */
import { ROOT_CONTEXT, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import type { Context, Span, Tracer } from '@opentelemetry/api';
import type { ClientOptions, WorkflowClientInterceptor } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry/lib/client';

/** What the memo keeps of a plan's root span: enough to show the trace and to hang later commands under it. */
export interface PlanTraceContext {
  traceId: string;
  spanId: string;
}

/**
 * The SDK's interceptor for the calls that reach the workflow and carry the trace there (start, updates, signals)
 * and those that end it. Reads (describe, query) are left untraced: `plan wait` describes the plan five times a
 * second, and each would otherwise be a trace of its own that says nothing about the plan.
 */
export function tracingClientOptions(tracer: Tracer): Pick<ClientOptions, 'interceptors'> {
  const otel = new OpenTelemetryWorkflowClientInterceptor({ tracer });
  const traced: WorkflowClientInterceptor = {
    start: (input, next) => otel.start(input, next),
    startWithDetails: (input, next) => otel.startWithDetails(input, next),
    startUpdate: (input, next) => otel.startUpdate(input, next),
    startUpdateWithStart: (input, next) => otel.startUpdateWithStart(input, next),
    signal: (input, next) => otel.signal(input, next),
    signalWithStart: (input, next) => otel.signalWithStart(input, next),
    cancel: (input, next) => otel.cancel(input, next),
    terminate: (input, next) => otel.terminate(input, next),
  };
  return { interceptors: { workflow: [traced] } };
}

/**
 * Runs `run` in a new root span: the plan's, whose context `run` keeps in the memo. A trace the sampler left out
 * (OTEL_TRACES_SAMPLER) is recorded nowhere, so `run` gets null: `plan show` must not name a trace nobody can open.
 */
export function inRootSpan<T>(
  tracer: Tracer,
  name: string,
  run: (span: Span, context: PlanTraceContext | null) => Promise<T>,
): Promise<T> {
  return inSpan(tracer, name, ROOT_CONTEXT, (span) => {
    const { traceId, spanId, traceFlags } = span.spanContext();
    return run(span, (traceFlags & TraceFlags.SAMPLED) === 0 ? null : { traceId, spanId });
  });
}

/** Runs `run` in a span under the plan's root span, or in a root of its own for a plan started untraced. */
export function inPlanSpan<T>(
  tracer: Tracer,
  name: string,
  plan: PlanTraceContext | null,
  run: (span: Span) => Promise<T>,
): Promise<T> {
  const parent =
    plan === null
      ? ROOT_CONTEXT
      : trace.setSpanContext(ROOT_CONTEXT, { ...plan, traceFlags: TraceFlags.SAMPLED, isRemote: true });
  return inSpan(tracer, name, parent, run);
}

function inSpan<T>(
  tracer: Tracer,
  name: string,
  parent: Context,
  run: (span: Span) => Promise<T>,
): Promise<T> {
  return tracer.startActiveSpan(name, {}, parent, async (span) => {
    try {
      return await run(span);
    } catch (err) {
      span.recordException(err instanceof Error ? err : String(err));
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: err instanceof Error ? err.message : String(err),
      });
      throw err;
    } finally {
      span.end();
    }
  });
}
