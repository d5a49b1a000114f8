/**
 * The workflow half of a plan's trace (ADR 0013): Temporal's OpenTelemetry workflow interceptors, which make the
 * RunWorkflow span (a child of the client's StartWorkflow, from the start's headers) and a StartActivity span for
 * every activity and local activity, and carry the trace to the activities in their headers. Their spans leave the
 * sandbox through the `exporter` sink the worker injects. Bundled only by a worker with tracing on
 * (worker/tracing.ts): a worker without it bundles none of this, and a plan's history is the same either way.
 */
export { interceptors } from '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors';
