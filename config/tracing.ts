/**
 * OpenTelemetry's standard variables, shared by the worker and the CLI (ADR 0013). Each process spreads
 * `tracingEnvFields` into its own zod schema and turns the result into a TracingConfig with its own default service
 * name. No endpoint, no tracing: the process installs no interceptor and loads no OpenTelemetry SDK.
 */
import { z } from 'zod';

const httpUrl = z
  .string()
  .trim()
  .refine((value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'http:' || url.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'must be an http(s) URL of an OTLP/HTTP receiver, e.g. http://127.0.0.1:4318');

export const tracingEnvFields = {
  /** The collector's base URL; traces go to `<it>/v1/traces` (the OTLP/HTTP convention). Unset: tracing off. */
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl.optional(),
  /** The full URL traces go to, used as given; wins over OTEL_EXPORTER_OTLP_ENDPOINT. Unset too: tracing off. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: httpUrl.optional(),
  /** The `service.name` of this process's spans; each process has its own default. */
  OTEL_SERVICE_NAME: z.string().trim().min(1).optional(),
};

export const WORKER_SERVICE_NAME = 'cleveragents-worker';
export const CLI_SERVICE_NAME = 'cleveragents-cli';

export interface TracingConfig {
  /** Where spans are posted: OTLP over HTTP, JSON bodies (@opentelemetry/exporter-trace-otlp-http). */
  tracesUrl: string;
  serviceName: string;
}

type TracingVariables = { [K in keyof typeof tracingEnvFields]?: string | undefined };

/** Null when neither endpoint is set: tracing is off. */
export function tracingConfigFrom(vars: TracingVariables, defaultServiceName: string): TracingConfig | null {
  const tracesUrl =
    vars.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (vars.OTEL_EXPORTER_OTLP_ENDPOINT === undefined
      ? undefined
      : `${vars.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`);
  if (tracesUrl === undefined) return null;
  return { tracesUrl, serviceName: vars.OTEL_SERVICE_NAME ?? defaultServiceName };
}
