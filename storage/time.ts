/** Timestamps arrive as ISO text (activity inputs are JSON); a bad one is refused before anything is written. */
export function parseTime(iso: string, what: string): Date {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) throw new RangeError(`${what} is not a timestamp: ${iso}`);
  return date;
}
