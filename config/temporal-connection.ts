/**
 * How every process that talks to Temporal (the worker's NativeConnection, the CLI's Connection) reaches it: the
 * address, and TLS, mTLS or an API key from the TEMPORAL_TLS* and TEMPORAL_API_KEY variables (config/env.ts). One
 * function reads them and one builds the options, so the worker and the CLI cannot connect differently.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { TLSConfig } from '@temporalio/client';
import { REPO_ROOT } from './paths';

/** How to reach the Temporal server; `tls` null: plaintext, as the local dev server speaks. */
export interface TemporalConnectionConfig {
  temporalAddress: string;
  temporalTls: TLSConfig | null;
  /** Sent as a bearer token on every call (Temporal Cloud); null: none. */
  temporalApiKey: string | null;
}

/** The variables as config/env.ts parsed them. */
export interface TemporalTlsVariables {
  TEMPORAL_TLS?: boolean | undefined;
  TEMPORAL_TLS_CA?: string | undefined;
  TEMPORAL_TLS_CERT?: string | undefined;
  TEMPORAL_TLS_KEY?: string | undefined;
  TEMPORAL_TLS_SERVER_NAME?: string | undefined;
  TEMPORAL_API_KEY?: string | undefined;
}

/**
 * TLS and the API key from the parsed variables, the PEM files read now: a path that is wrong fails the process at
 * start, naming its variable, instead of the first connection with a handshake error. Problems come back as one
 * line each, in the configuration's own format, for the caller to report with the rest.
 */
export function resolveTemporalTls(variables: TemporalTlsVariables): {
  tls: TLSConfig | null;
  apiKey: string | null;
  problems: string[];
} {
  const problems: string[] = [];
  const { TEMPORAL_TLS_CERT: cert, TEMPORAL_TLS_KEY: key } = variables;
  if ((cert === undefined) !== (key === undefined)) {
    problems.push(
      `TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY: mTLS needs both the client certificate and its key ` +
        `(got only ${cert === undefined ? 'TEMPORAL_TLS_KEY' : 'TEMPORAL_TLS_CERT'})`,
    );
  }
  const implying = (
    [
      'TEMPORAL_TLS_CA',
      'TEMPORAL_TLS_CERT',
      'TEMPORAL_TLS_KEY',
      'TEMPORAL_TLS_SERVER_NAME',
      'TEMPORAL_API_KEY',
    ] as const
  ).filter((name) => variables[name] !== undefined);
  // Said off while asking for TLS settings: which was meant cannot be guessed, and a key must not go out in clear.
  if (variables.TEMPORAL_TLS === false && implying.length > 0) {
    problems.push(
      `TEMPORAL_TLS: is false, but ${implying.join(', ')} ${implying.length > 1 ? 'need' : 'needs'} TLS`,
    );
  }
  const read = (name: 'TEMPORAL_TLS_CA' | 'TEMPORAL_TLS_CERT' | 'TEMPORAL_TLS_KEY'): Buffer | undefined => {
    const file = variables[name];
    if (file === undefined) return undefined;
    try {
      return readFileSync(path.resolve(REPO_ROOT, file));
    } catch (err) {
      const reason =
        (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));
      problems.push(`${name}: cannot read ${JSON.stringify(file)} (${reason})`);
      return undefined;
    }
  };
  const ca = read('TEMPORAL_TLS_CA');
  const crt = read('TEMPORAL_TLS_CERT');
  const keyPem = read('TEMPORAL_TLS_KEY');
  const on = variables.TEMPORAL_TLS ?? implying.length > 0;
  const tls: TLSConfig | null = on
    ? {
        ...(ca === undefined ? {} : { serverRootCACertificate: ca }),
        ...(crt === undefined || keyPem === undefined ? {} : { clientCertPair: { crt, key: keyPem } }),
        ...(variables.TEMPORAL_TLS_SERVER_NAME === undefined
          ? {}
          : { serverNameOverride: variables.TEMPORAL_TLS_SERVER_NAME }),
      }
    : null;
  return { tls, apiKey: variables.TEMPORAL_API_KEY ?? null, problems };
}

/**
 * The options both connections take (NativeConnection.connect, Connection.connect): the TLS setting is always
 * explicit, so neither SDK's default decides it.
 */
export function temporalConnectionOptions(config: TemporalConnectionConfig): {
  address: string;
  tls: TLSConfig | false;
  apiKey?: string;
} {
  return {
    address: config.temporalAddress,
    tls: config.temporalTls ?? false,
    ...(config.temporalApiKey === null ? {} : { apiKey: config.temporalApiKey }),
  };
}

/** For log lines: how the connection is secured, never the key itself. */
export function describeTemporalSecurity(config: TemporalConnectionConfig): string {
  if (config.temporalTls === null) return 'plaintext';
  const parts = [config.temporalTls.clientCertPair === undefined ? 'TLS' : 'mTLS'];
  if (config.temporalApiKey !== null) parts.push('API key');
  return parts.join(', ');
}
