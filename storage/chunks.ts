/**
 * Prisma assumes SQLite's historical limit of 999 bound values per statement and refuses larger `in` lists
 * (P2029) instead of splitting them, so queries over a batch of decisions run in chunks.
 */
export const IN_LIST_CHUNK = 500;

/** Runs `query` on consecutive slices of `values` (at most IN_LIST_CHUNK each) and concatenates the answers. */
export async function inChunks<V, R>(
  values: readonly V[],
  query: (chunk: V[]) => Promise<R[]>,
): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < values.length; i += IN_LIST_CHUNK) {
    results.push(...(await query(values.slice(i, i + IN_LIST_CHUNK))));
  }
  return results;
}
