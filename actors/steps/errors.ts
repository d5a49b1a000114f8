/**
 * A step that cannot be carried out as written: a refused path, a template naming an unknown argument, a failing
 * command. Retrying may help only for commands; cancellation is never a StepError (it is rethrown as is).
 */
export class StepError extends Error {
  override name = 'StepError';

  /** False when running the step again cannot help (the worker cannot isolate commands at all). */
  readonly retryable: boolean;

  constructor(
    message: string,
    /** Longer evidence for the failure (a command's output tail); null when the message says it all. */
    readonly details: string | null = null,
    options: { retryable?: boolean } = {},
  ) {
    super(message);
    this.retryable = options.retryable ?? true;
  }
}
