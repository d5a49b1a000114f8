/**
 * The worker's Prometheus endpoint (issue 14): Temporal's own runtime serves it, with the SDK core's metrics
 * (`temporal_*`: polls, task latencies, slots, sticky cache) and the engine's (`agents_*`, domain/metrics.ts), which
 * the workflow and the activities emit through the same runtime meter. One endpoint, one registry, and no second
 * metrics library in the process (ADR 0012).
 */
import { freePort } from '../lib/net';
import type { RuntimeOptions } from '@temporalio/worker';
import { ENGINE_HISTOGRAM_BUCKETS } from '../domain/metrics';

export interface MetricsEndpoint {
  /** Where Prometheus scrapes, `/metrics` included. */
  url: string;
  /** For RuntimeOptions.telemetryOptions.metrics. */
  exporter: NonNullable<NonNullable<RuntimeOptions['telemetryOptions']>['metrics']>;
}

/**
 * The exporter for `host:port`. Port 0 is resolved here to a port the system has free: the runtime binds the
 * address itself and does not report the port it got (the bridge drops the bound address), so the worker could not
 * say where it listens. Between this probe and the runtime's bind another process could take the port; the
 * runtime then fails to start, saying so, and nothing runs half-configured.
 */
export async function prometheusEndpoint(options: { host: string; port: number }): Promise<MetricsEndpoint> {
  const port = options.port === 0 ? await freePort(options.host) : options.port;
  const address = options.host.includes(':') ? `[${options.host}]:${port}` : `${options.host}:${port}`;
  return {
    url: `http://${address}/metrics`,
    exporter: {
      prometheus: {
        bindAddress: address,
        histogramBucketOverrides: ENGINE_HISTOGRAM_BUCKETS,
      },
    },
  };
}
