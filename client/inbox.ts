/**
 * The inbox read from Temporal's visibility (ADR 0022): the workflow list the Web UI shows for the same query, so
 * it needs neither the database nor a worker. Visibility is eventually consistent: a plan that opened a gate a
 * moment ago may be listed a moment later.
 */
import type { Client } from '@temporalio/client';
import { inboxRow } from '../domain/inbox';
import type { InboxRow } from '../domain/inbox';
import { PLAN_NAME_MEMO } from '../workflows/definitions';
import { PlanClientError } from './errors';

export interface InboxListing {
  /** In the order visibility listed them: `inboxRows` (domain/inbox.ts) filters, sorts and shortens them. */
  rows: InboxRow[];
  /** More plans matched than `limit`: the rows are the first `limit` visibility returned, not the oldest. */
  truncated: boolean;
}

const GRPC_INVALID_ARGUMENT = 3;
const GRPC_UNAVAILABLE = 14;

export async function listInbox(
  temporal: Client,
  query: string,
  options: { limit: number; now?: Date },
): Promise<InboxListing> {
  const now = options.now ?? new Date();
  const rows: InboxRow[] = [];
  let truncated = false;
  try {
    for await (const info of temporal.workflow.list({ query, pageSize: Math.min(options.limit + 1, 1000) })) {
      const name = info.memo?.[PLAN_NAME_MEMO];
      const row = inboxRow(
        {
          workflowId: info.workflowId,
          name: typeof name === 'string' ? name : null,
          attributes: Object.fromEntries(
            info.typedSearchAttributes.getAll().map((pair) => [pair.key.name, pair.value]),
          ),
        },
        now,
      );
      if (row === null) continue;
      if (rows.length === options.limit) {
        truncated = true;
        break;
      }
      rows.push(row);
    }
  } catch (err) {
    throw explain(err);
  }
  return { rows, truncated };
}

/**
 * A server whose namespace lacks one of the attributes the query names refuses the query itself: a deployment
 * upgraded without registering the new attributes. Say what to run rather than quote the server's parser.
 */
function explain(err: unknown): unknown {
  // The SDK wraps the gRPC error (with its code) in a ServiceError of its own.
  const grpc = (err as { cause?: unknown } | null)?.cause ?? err;
  const code = (grpc as { code?: unknown } | null)?.code;
  if (code === GRPC_INVALID_ARGUMENT) {
    const detail = (grpc as { details?: unknown }).details;
    return new PlanClientError(
      'unavailable',
      `the Temporal server refused the inbox's query (${typeof detail === 'string' ? detail : String(grpc)}); ` +
        "if it names a search attribute, register the engine's search attributes in this namespace: " +
        'npx tsx scripts/register-search-attributes.ts',
    );
  }
  if (code === GRPC_UNAVAILABLE) {
    return new PlanClientError(
      'unavailable',
      'the Temporal server is not reachable; start it with npm start',
    );
  }
  return err;
}
