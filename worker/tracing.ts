/**
 * The worker's half of a plan's trace (ADR 0013): the options a traced worker adds to its own. Loaded only when
 * tracing is on.
 */
import {
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  makeWorkflowExporter,
} from '@temporalio/interceptors-opentelemetry/lib/worker';
import type { WorkerOptions } from '@temporalio/worker';
import type { Tracing } from '../lib/tracing';

/**
 * The workflow interceptors, bundled with the workflows. A worker that bundles its workflows itself gets them from
 * `interceptors.workflowModules`; a prebuilt bundle (tests) must have been made with them
 * (`bundleWorkflowCode({ workflowInterceptorModules: TRACING_WORKFLOW_MODULES })`), since the worker cannot add
 * them to it.
 */
export const TRACING_WORKFLOW_MODULES: readonly string[] = [require.resolve('../workflows/tracing')];

export function tracingWorkerOptions(tracing: Tracing): Pick<WorkerOptions, 'interceptors' | 'sinks'> {
  const { tracer } = tracing;
  return {
    interceptors: {
      // RunActivity spans, children of the workflow's StartActivity (from the activity's headers); the outbound
      // half puts the trace and span ids on the activity's log lines.
      activity: [
        (ctx) => ({
          inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer }),
          outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
      workflowModules: [...TRACING_WORKFLOW_MODULES],
    },
    // The workflow sandbox cannot export: its spans come out through this sink, after each workflow task (never
    // while replaying), into the same batches as the activities' spans.
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  };
}
