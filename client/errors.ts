/**
 * Errors the client library raises, each with the CLI exit code it maps to. A caller (the CLI, a script, a test)
 * can tell "you asked for something impossible" from "the service is down" without parsing messages.
 */
export const EXIT_CODES = {
  ok: 0,
  failure: 1,
  usage: 2,
  notFound: 3,
  refused: 4,
  unavailable: 5,
} as const;

export type ClientErrorKind = 'usage' | 'notFound' | 'refused' | 'unavailable';

export class PlanClientError extends Error {
  override name = 'PlanClientError';
  constructor(
    readonly kind: ClientErrorKind,
    message: string,
  ) {
    super(message);
  }

  get exitCode(): number {
    return EXIT_CODES[this.kind];
  }
}
