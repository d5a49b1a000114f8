import type { Tracer } from '@opentelemetry/api';
import { Client, Connection, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { WorkflowExecutionDescription, WorkflowExecutionStatusName } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { Payload } from '@temporalio/common';
import { ulid } from 'ulid';
import { describeTemporalSecurity, temporalConnectionOptions } from '../config/temporal-connection';
import { planWorkflowId } from '../domain/ids';
import type { CorrectionSituation } from '../domain/correction';
import type { AutomationLevel } from '../domain/lifecycle';
import { initialSnapshot } from '../domain/plan';
import type { PlanSnapshot } from '../domain/plan';
import type { PlanSpec } from '../domain/schemas';
import type { CatalogStore, PlanRecord, PlanStore } from '../storage/types';
import type { InvariantStore } from '../storage/invariants';
import type { ContextFileInput, ContextFileStore } from '../storage/context-files';
import { getOrFail, openStores } from './catalog';
import type { Project } from '../domain/catalog';
import { checkProjectLinks, parseProjectLinkOption } from '../domain/project-link';
import { chooseProfileName, resolvePlanSpec } from '../domain/resolve';
import type { ProjectLink } from '../domain/schemas';
import { planWorkflow } from '../workflows';
import {
  PLAN_NAME_MEMO,
  PLAN_TRACE_ID_MEMO,
  PLAN_TRACE_SPAN_MEMO,
  TASK_QUEUE,
  advancePlanUpdate,
  amendPlanUpdate,
  correctDecisionUpdate,
  correctionSituationQuery,
  getPlanQuery,
  pausePlanUpdate,
  recordRefusalSignal,
  resumePlanUpdate,
  retryPhaseUpdate,
  setAutomationUpdate,
  startSearchAttributes,
} from '../workflows/definitions';
import { refusalMessage, refusalOf } from '../domain/refusals';
import type { CommandRefusal, RefusableCommand } from '../domain/refusals';
import { planSummary } from '../domain/gates';
import type {
  AdvancePlanRequest,
  AmendPlanRequest,
  CorrectDecisionRequest,
  CorrectDecisionResult,
  HoldPlanRequest,
  RetryPhaseRequest,
  SetAutomationRequest,
} from '../workflows/definitions';
import type { ClientConfig } from './config';
import type * as ClientTracing from './tracing';
import type { PlanTraceContext } from './tracing';
import { PlanClientError } from './errors';
import { needsPersonOrEnded } from './plan-status';
import { planNotFound, resolvePlanId } from './plan-ref';

export interface CreatePlanInput {
  actionName: string;
  /** Raw `--project name[:alias][:ro]` values. */
  projects: string[];
  /** Explicit level; otherwise the profile's, otherwise the action's default. */
  automationLevel?: AutomationLevel;
  /** Explicit profile; otherwise the action's default profile, if any. */
  profileName?: string;
  /** Raw `--arg` values, in the order given; typed and defaulted against the action's definitions. */
  arguments: Record<string, string>;
  name?: string;
  description?: string;
  tags?: string[];
  createdBy: string;
  /**
   * Files read and checked by the caller (collectContextFiles), stored before the workflow starts so Strategize
   * sees them. Needs the client's `contextFiles` store.
   */
  contextFiles?: ContextFileInput[];
  /** The most a plan's whole context may hold; the add is refused, and nothing started, beyond it. */
  maxContextBytes?: number;
}

/** A plan as the CLI shows it: the durable record, plus what only the live workflow knows. */
export interface PlanView extends PlanRecord {
  awaitingApproval: boolean;
  workflowStatus: WorkflowExecutionStatusName;
  /** What the running phase reports it is doing (its activity's heartbeat); null between phases. */
  progress: string | null;
  /** The OpenTelemetry trace of the plan's run (the workflow's memo); null when it was started untraced. */
  traceId: string | null;
}

export interface PlanClientOptions {
  /** How long a command waits for the workflow to act on it before saying the worker does not answer. */
  commandTimeoutMs?: number;
  taskQueue?: string;
  /** History events after which a plan waiting at a gate continues as new; the workflow's default otherwise. */
  historyEventLimit?: number;
  /**
   * Tracing on (ADR 0013): `create` runs in a `plan.use` span, the root of the plan's trace, and keeps its trace id
   * in the workflow's memo. The Temporal client must carry the OpenTelemetry interceptor with this same tracer
   * (connectPlanClient does), or the workflow's spans start a trace of their own.
   */
  tracer?: Tracer;
  /** Where `create` stores the context files it is given (connectPlanClient passes the database's). */
  contextFiles?: ContextFileStore;
}

const DEFAULT_COMMAND_TIMEOUT_MS = 30_000;

/** How long a refused command waits for its refusal to be in the record before it answers anyway. */
const REFUSAL_LOG_WAIT_MS = 10_000;

/** A person's command, as the log of refusals names it (ADR 0021): which one, and who sent it. */
export interface AskedCommand {
  command: RefusableCommand;
  by: string;
}

type PlanHandle = ReturnType<Client['workflow']['getHandle']>;

/**
 * The engine's client library: the CLI is one user, tests and scripts are others. Writes go to the workflow
 * (which owns live state); reads of history and lists come from the database the activities maintain. A method
 * that takes a plan takes what a person types for it: its id, a unique prefix of the id, or its name (ADR 0020).
 */
export class PlanClient {
  private readonly commandTimeoutMs: number;
  /** Whole plan ids already resolved: see planIdOf. */
  private readonly wholeIds = new Set<string>();
  private readonly taskQueue: string;
  private readonly historyEventLimit: number | undefined;
  private readonly tracer: Tracer | undefined;
  private readonly contextFiles: ContextFileStore | undefined;

  constructor(
    readonly temporal: Client,
    readonly plans: PlanStore,
    readonly catalog: CatalogStore,
    readonly invariants: InvariantStore,
    options: PlanClientOptions = {},
  ) {
    this.commandTimeoutMs = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    this.taskQueue = options.taskQueue ?? TASK_QUEUE;
    this.historyEventLimit = options.historyEventLimit;
    this.tracer = options.tracer;
    this.contextFiles = options.contextFiles;
  }

  /**
   * Resolves everything before the workflow starts (action, arguments, project links, profile snapshot,
   * invariants): a plan that cannot run is never started, and the workflow input is the validated spec.
   */
  async create(input: CreatePlanInput): Promise<PlanSnapshot> {
    if (this.tracer === undefined) return this.createPlan(input, null);
    // The root of the plan's trace: resolving, starting the workflow (whose spans hang under it) and the plan row.
    return tracing().inRootSpan(this.tracer, 'plan.use', async (span, traceContext) => {
      span.setAttribute('plan.action', input.actionName);
      const created = await this.createPlan(input, traceContext);
      span.setAttribute('plan.id', created.planId);
      return created;
    });
  }

  private async createPlan(input: CreatePlanInput, trace: PlanTraceContext | null): Promise<PlanSnapshot> {
    const spec = await this.resolve(input);
    const workflowId = planWorkflowId(spec.planId);
    const queued = initialSnapshot(spec, workflowId);
    const context = input.contextFiles ?? [];
    if (context.length > 0) {
      await this.storeContextFirst(spec, context, input.maxContextBytes);
      await this.startOrDiscard(spec.planId, () => this.start(spec, queued, trace));
      return queued;
    }
    await this.start(spec, queued, trace);
    // The row exists from the start, so a queued plan can be listed and given context before a worker picks it
    // up. The workflow's first activity writes the same row and event (sequence 0) and finds them already there.
    await this.plans.recordPlanCreated({ spec, eventSeq: 0 });
    return queued;
  }

  private async start(spec: PlanSpec, queued: PlanSnapshot, trace: PlanTraceContext | null): Promise<void> {
    const workflowId = queued.workflowId;
    await this.call(() =>
      this.temporal.workflow.start(planWorkflow, {
        workflowId,
        taskQueue: this.taskQueue,
        args: [
          this.historyEventLimit === undefined
            ? spec
            : { ...spec, historyEventLimit: this.historyEventLimit },
        ],
        // The trace is kept where every later command finds it (describe), for the plan's whole life.
        memo: {
          [PLAN_NAME_MEMO]: spec.name,
          ...(trace === null
            ? {}
            : { [PLAN_TRACE_ID_MEMO]: trace.traceId, [PLAN_TRACE_SPAN_MEMO]: trace.spanId }),
        },
        // Set at start so the Web UI can filter the plan before a worker has picked it up.
        typedSearchAttributes: startSearchAttributes(queued),
        // What the plan is, on the Web UI's workflow list without opening its input.
        staticSummary: planSummary(spec),
      }),
    );
  }

  /**
   * A plan started with context (ADR 0017): the row and the files are written before the workflow exists, so its
   * Strategize cannot run ahead of them. A context the store refuses (too big with what is there) leaves nothing.
   */
  private async storeContextFirst(
    spec: PlanSpec,
    files: ContextFileInput[],
    maxTotalBytes: number | undefined,
  ): Promise<void> {
    const store = this.contextFiles;
    if (store === undefined) throw new Error('PlanClient: context files given but no contextFiles store');
    await this.plans.recordPlanCreated({ spec, eventSeq: 0 });
    try {
      await store.add(spec.planId, files, spec.createdBy, spec.createdAt, {
        ...(maxTotalBytes === undefined ? {} : { maxTotalBytes }),
      });
    } catch (err) {
      await this.plans.discardUnstarted(spec.planId);
      throw err;
    }
  }

  /**
   * Starts the workflow of a plan whose row is already written; when the start fails, the row and its context go
   * too, unless the workflow turns out to exist (a start that timed out on the way back did happen). When even
   * that cannot be asked, the row stays: throwing away the context of a plan that may be running would be worse.
   */
  private async startOrDiscard(planId: string, start: () => Promise<void>): Promise<void> {
    try {
      await start();
    } catch (err) {
      const exists = await this.temporal.workflow
        .getHandle(planWorkflowId(planId))
        .describe()
        .then(
          () => true,
          (describeErr: unknown) => (describeErr instanceof WorkflowNotFoundError ? false : null),
        );
      if (exists === true) return;
      if (exists === false) await this.plans.discardUnstarted(planId);
      throw err;
    }
  }

  private async resolve(input: CreatePlanInput): Promise<PlanSpec> {
    const action = await getOrFail('action', input.actionName, (n) => this.catalog.getAction(n));
    const parsedLinks: ProjectLink[] = [];
    for (const option of input.projects) {
      const parsed = parseProjectLinkOption(option);
      if (!parsed.ok) throw new PlanClientError('usage', parsed.error);
      parsedLinks.push(parsed.link);
    }
    const linkCheck = checkProjectLinks(parsedLinks);
    if (!linkCheck.ok) throw new PlanClientError('usage', linkCheck.error);
    const links = linkCheck.links;
    const projects = new Map<string, Project>();
    for (const link of links) {
      const stored = await getOrFail('project', link.projectName, (n) => this.catalog.getProject(n));
      projects.set(link.projectName, stored.value);
    }
    const profileName = chooseProfileName(input.profileName, action.value);
    const profile =
      profileName === null
        ? null
        : (await getOrFail('profile', profileName, (n) => this.catalog.getProfile(n))).value;
    const inheritedInvariants = await this.invariants.inherited(
      links.map((l) => l.projectName),
      action.value.name,
    );
    const resolved = resolvePlanSpec({
      inheritedInvariants,
      planId: ulid(),
      createdAt: new Date().toISOString(),
      createdBy: input.createdBy,
      action: action.value,
      projects,
      links,
      profile,
      rawArguments: input.arguments,
      tags: input.tags ?? [],
      ...(input.name === undefined ? {} : { name: input.name }),
      ...(input.description === undefined ? {} : { description: input.description }),
      ...(input.automationLevel === undefined ? {} : { automationLevel: input.automationLevel }),
    });
    if (!resolved.ok) throw new PlanClientError('usage', resolved.error);
    return resolved.spec;
  }

  /**
   * A plan as the database records it. The workflow writes every change before it shows it (ADR 0001), so the
   * record is never behind the live state, and reading it needs no worker. Whether the plan waits at a gate is
   * its last event that moved it (a correction at a gate does not close the gate).
   */
  async get(ref: string): Promise<PlanView> {
    const planId = await this.planIdOf(ref);
    const description = await this.describe(planId);
    const record = await this.plans.getPlan(planId);
    if (record === null) {
      throw new PlanClientError(
        'unavailable',
        `plan ${planId} is queued but no worker has picked it up yet; is a worker running (npm start)?`,
      );
    }
    const last = await this.plans.lastStateEvent(planId);
    return {
      ...record,
      awaitingApproval: last?.type === 'AWAITING_APPROVAL',
      workflowStatus: description.status.name,
      progress: progressOf(description),
      traceId: traceOf(description)?.traceId ?? null,
    };
  }

  /**
   * The live workflow state (the getPlan query): unlike the record, it knows a gate the moment it opens. `verb`
   * names the command it serves, for the error when the plan has finished.
   */
  async snapshot(ref: string, verb = 'query', asked?: AskedCommand): Promise<PlanSnapshot> {
    return this.command(ref, verb, (handle) => handle.query(getPlanQuery), undefined, asked);
  }

  /**
   * What the running phase is doing now: the latest heartbeat of its activity (the actors report each step), or
   * null when no phase activity is running. The same details show in the Web UI's pending activities.
   */
  async progress(ref: string): Promise<string | null> {
    const handle = this.temporal.workflow.getHandle(planWorkflowId(await this.planIdOf(ref)));
    return progressOf(await this.call(() => handle.describe()));
  }

  /** The workflow's status alone (RUNNING, COMPLETED, …): what a follower polls, with no read of the record. */
  async workflowStatus(ref: string): Promise<string> {
    return (await this.describe(await this.planIdOf(ref))).status.name;
  }

  async advance(ref: string, request: AdvancePlanRequest): Promise<PlanSnapshot> {
    return this.command(
      ref,
      'advance',
      (handle) => handle.executeUpdate(advancePlanUpdate, { args: [request] }),
      'plan.advance',
      { command: 'advance', by: request.by },
    );
  }

  /** The running plan records the correction itself (an update), so its next decisions build on it. */
  async correct(planId: string, request: CorrectDecisionRequest): Promise<CorrectDecisionResult> {
    return this.command(
      planId,
      'correct a decision of',
      (handle) => handle.executeUpdate(correctDecisionUpdate, { args: [request] }),
      'plan.correct',
      { command: 'correct', by: request.by },
    );
  }

  /**
   * What a correction would be judged against now (the workflow's live state): `plan correct --dry-run` computes
   * the impact from it and the decision tree, changing nothing.
   */
  async correctionSituation(planId: string): Promise<CorrectionSituation> {
    return this.command(planId, 'correct a decision of', (handle) => handle.query(correctionSituationQuery));
  }

  /** More instructions for a plan waiting after Strategize; returns once Strategize has started again. */
  async amend(ref: string, request: AmendPlanRequest): Promise<PlanSnapshot> {
    return this.command(
      ref,
      'amend',
      (handle) => handle.executeUpdate(amendPlanUpdate, { args: [request] }),
      'plan.amend',
      { command: 'amend', by: request.by },
    );
  }

  /** Holds the plan before its next phase; returns once the pause is recorded. */
  async pause(ref: string, request: HoldPlanRequest): Promise<PlanSnapshot> {
    return this.command(
      ref,
      'pause',
      (handle) => handle.executeUpdate(pausePlanUpdate, { args: [request] }),
      'plan.pause',
      { command: 'pause', by: request.by },
    );
  }

  async resume(ref: string, request: HoldPlanRequest): Promise<PlanSnapshot> {
    return this.command(
      ref,
      'resume',
      (handle) => handle.executeUpdate(resumePlanUpdate, { args: [request] }),
      'plan.resume',
      { command: 'resume', by: request.by },
    );
  }

  /** The level the plan's next gates follow; a gate already open stays open. */
  async setAutomation(ref: string, request: SetAutomationRequest): Promise<PlanSnapshot> {
    return this.command(
      ref,
      'change the automation level of',
      (handle) => handle.executeUpdate(setAutomationUpdate, { args: [request] }),
      'plan.set-automation',
      { command: 'set-automation', by: request.by },
    );
  }

  async retry(ref: string, request: RetryPhaseRequest): Promise<PlanSnapshot> {
    return this.command(
      ref,
      'retry',
      (handle) => handle.executeUpdate(retryPhaseUpdate, { args: [request] }),
      'plan.retry',
      { command: 'retry', by: request.by },
    );
  }

  /**
   * Requests cancellation and waits until the workflow has recorded it, so the database says CANCELLED. `by` is
   * whom a refusal (the plan has finished) is logged against; Temporal's cancellation itself names nobody.
   */
  async cancel(ref: string, request: { by?: string } = {}): Promise<PlanRecord> {
    const planId = await this.planIdOf(ref);
    await this.command(
      planId,
      'cancel',
      async (handle) => {
        await handle.cancel();
        await handle.result().catch(() => undefined);
      },
      'plan.cancel',
      { command: 'cancel', by: request.by ?? '' },
    );
    const record = await this.plans.getPlan(planId);
    if (record === null) throw planNotFound(planId);
    return record;
  }

  /**
   * Waits until the plan needs a person (a gate or an error) or has finished. Scripts and tests use it between
   * `plan use` and `plan advance`, instead of sleeping.
   */
  async waitForInput(ref: string, timeoutMs = 60_000): Promise<PlanView> {
    const deadline = Date.now() + timeoutMs;
    const planId = await this.planIdOf(ref);
    for (;;) {
      // Right after creation neither the record nor the first workflow task exists yet: keep polling.
      const view = await this.get(planId).catch((err: unknown) => {
        if (err instanceof PlanClientError && err.kind === 'unavailable' && Date.now() < deadline)
          return undefined;
        throw err;
      });
      if (view !== undefined && needsPersonOrEnded(view)) return view;
      if (Date.now() > deadline) {
        const where = view === undefined ? 'not started' : `still ${view.phase} ${view.state}`;
        throw new PlanClientError(
          'unavailable',
          `plan ${planId} is ${where} after ${Math.round(timeoutMs / 1000)} s; is a worker running (npm start)?`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /**
   * Runs a command against a plan's workflow and turns Temporal's failures into messages about the plan:
   * refused by the workflow, unknown plan, finished plan, or no worker answering. A command that changes the plan
   * names its span: with tracing on, it joins the plan's trace under its root (the workflow's update handling is
   * its child), so a gate's approval is in the same trace as the phases around it.
   */
  private async command<T>(
    ref: string,
    verb: string,
    run: (handle: PlanHandle) => Promise<T>,
    spanName?: string,
    asked?: AskedCommand,
  ): Promise<T> {
    const planId = await this.planIdOf(ref);
    const handle = this.temporal.workflow.getHandle(planWorkflowId(planId));
    const description = await this.describe(planId);
    if (description.status.name !== 'RUNNING') {
      const reason = await this.finishedReason(planId, description.status.name);
      throw await this.refused(planId, verb, reason, asked, null);
    }
    const { tracer } = this;
    const traced =
      tracer === undefined || spanName === undefined
        ? run
        : (h: typeof handle) => tracing().inPlanSpan(tracer, spanName, traceOf(description), () => run(h));
    try {
      return await this.temporal.withDeadline(Date.now() + this.commandTimeoutMs, () => traced(handle));
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) {
        throw await this.refused(planId, verb, innermostMessage(err), asked, handle);
      }
      if (err instanceof WorkflowNotFoundError) {
        throw await this.refused(planId, verb, await this.finishedReason(planId, 'COMPLETED'), asked, null);
      }
      if (isDeadlineError(err)) {
        throw new PlanClientError(
          'unavailable',
          `no worker acted on the ${verb} of plan ${planId} within ${Math.round(this.commandTimeoutMs / 1000)} s; is a worker running (npm start)?`,
        );
      }
      throw toUnavailable(err);
    }
  }

  /** The plan a person's reference means (its id, a unique id prefix, or its name: ADR 0020). */
  async planIdOf(ref: string): Promise<string> {
    if (this.wholeIds.has(ref)) return ref;
    const planId = await resolvePlanId(this.plans, ref);
    // A whole id means its plan for good, so a method handed one again (a poll, a command after its check, a
    // method calling another) needs no second lookup; a prefix or a name is looked up every time.
    if (planId === ref) this.wholeIds.add(planId);
    return planId;
  }

  private async finishedReason(planId: string, status: string): Promise<string> {
    const record = await this.plans.getPlan(planId);
    const where = record === null ? `workflow ${status}` : `${record.phase}, ${record.state}`;
    return `the plan has finished (${where})`;
  }

  /**
   * The refusal of a person's command, logged first (ADR 0021): Temporal keeps nothing of an update its validator
   * rejected, so the refused client reports it. While the workflow runs it records the refusal under its own
   * numbering (the `recordRefusal` signal, `handle`), and the client waits until it is written; once the workflow
   * has ended (`handle` null, or it ended meanwhile) the client appends the event itself. A refusal that cannot be
   * logged is still the answer, with a note that says so.
   */
  private async refused(
    planId: string,
    verb: string,
    reason: string,
    asked: AskedCommand | undefined,
    handle: PlanHandle | null,
  ): Promise<PlanClientError> {
    const message = `cannot ${verb} plan ${planId}: ${reason}`;
    if (asked === undefined) return new PlanClientError('refused', message);
    const refusal = refusalOf({ ...asked, reason });
    if (refusal === null) return new PlanClientError('refused', message);
    try {
      let logged = false;
      if (handle !== null) {
        const seen = await this.plans.lastEventSeq(planId);
        logged = await this.temporal
          .withDeadline(Date.now() + this.commandTimeoutMs, () => handle.signal(recordRefusalSignal, refusal))
          .then(
            () => true,
            (err: unknown) => {
              if (err instanceof WorkflowNotFoundError) return false;
              throw err;
            },
          );
        if (logged) await this.untilLogged(planId, seen, refusal);
      }
      if (!logged) {
        await this.plans.recordRefusal({ planId, eventSeq: null, at: new Date().toISOString(), ...refusal });
      }
      return new PlanClientError('refused', message);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      return new PlanClientError('refused', `${message} (the refusal could not be logged: ${why})`);
    }
  }

  /**
   * Waits, briefly, until the workflow has written the refusal it was signalled (a local activity, within
   * milliseconds), so that `plan events` right after a refused command shows it. The worker that just refused
   * is alive; should it stop now, the refusal is written when a worker takes the plan up again.
   */
  private async untilLogged(planId: string, afterSeq: number, refusal: CommandRefusal): Promise<void> {
    const message = refusalMessage(refusal);
    const deadline = Date.now() + Math.min(this.commandTimeoutMs, REFUSAL_LOG_WAIT_MS);
    while (Date.now() < deadline) {
      const events = await this.plans.listEvents(planId, afterSeq);
      const found = events.some(
        (e) => e.type === 'COMMAND_REFUSED' && e.recordedBy === refusal.by && e.message === message,
      );
      if (found) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** The plan's workflow as Temporal describes it; a workflow Temporal does not know is a plan not found. */
  private async describe(planId: string): Promise<WorkflowExecutionDescription> {
    const handle = this.temporal.workflow.getHandle(planWorkflowId(planId));
    return this.call(() => handle.describe()).catch((err: unknown) => {
      if (err instanceof WorkflowNotFoundError) throw planNotFound(planId);
      throw err;
    });
  }

  private async call<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      throw toUnavailable(err);
    }
  }
}

/** The `progress` of the first pending activity's latest heartbeat (what the phase activities report). */
function progressOf(description: WorkflowExecutionDescription): string | null {
  for (const activity of description.raw.pendingActivities ?? []) {
    const payload = activity.heartbeatDetails?.payloads?.[0];
    if (payload === undefined || payload === null) continue;
    const details = defaultPayloadConverter.fromPayload<{ progress?: unknown }>(payload as Payload);
    if (typeof details?.progress === 'string') return details.progress;
  }
  return null;
}

/** The plan's trace, as its start kept it in the memo; null for a plan started untraced. */
function traceOf(description: WorkflowExecutionDescription): PlanTraceContext | null {
  const traceId = description.memo?.[PLAN_TRACE_ID_MEMO];
  const spanId = description.memo?.[PLAN_TRACE_SPAN_MEMO];
  return typeof traceId === 'string' && typeof spanId === 'string' ? { traceId, spanId } : null;
}

/** Loaded on first use: where tracing is off, neither OpenTelemetry nor its interceptors are. */
function tracing(): typeof ClientTracing {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS project loads lazily by require
  return require('./tracing') as typeof ClientTracing;
}

export interface ConnectedPlanClient {
  client: PlanClient;
  close(): Promise<void>;
}

export async function connectPlanClient(
  config: ClientConfig,
  options: PlanClientOptions = {},
): Promise<ConnectedPlanClient> {
  // One Prisma client per database per process: two would block each other's SQLite locks (see storage/prisma).
  const stores = openStores(config);
  let connection: Connection;
  try {
    connection = await Connection.connect({
      ...temporalConnectionOptions(config),
      connectTimeout: '5 seconds',
    });
  } catch (err) {
    // Over TLS a wrong certificate looks like an unreachable server to grpc-js: point at the settings, not npm start.
    const security = describeTemporalSecurity(config);
    throw new PlanClientError(
      'unavailable',
      `cannot reach the Temporal server at ${config.temporalAddress}` +
        `${security === 'plaintext' ? '' : ` over ${security}`} ` +
        `(${err instanceof Error ? err.message : String(err)}); ` +
        (security === 'plaintext'
          ? 'start it with npm start'
          : 'check the server and TEMPORAL_TLS_CA, TEMPORAL_TLS_CERT, TEMPORAL_TLS_KEY, TEMPORAL_TLS_SERVER_NAME, TEMPORAL_API_KEY'),
    );
  }
  const temporal = new Client({
    connection,
    namespace: config.namespace,
    ...(options.tracer === undefined ? {} : tracing().tracingClientOptions(options.tracer)),
  });
  return {
    client: new PlanClient(temporal, stores.plans, stores.catalog, stores.invariants, {
      contextFiles: stores.contextFiles,
      ...options,
    }),
    async close() {
      await connection.close();
    },
  };
}

/** A refusal from an activity arrives wrapped (update failure > activity failure > application failure). */
function innermostMessage(err: Error): string {
  let current: Error = err;
  while (current.cause instanceof Error) current = current.cause;
  return current.message;
}

function isDeadlineError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  // gRPC DEADLINE_EXCEEDED (4) or CANCELLED (1) when our own deadline ends the call.
  return code === 4 || code === 1 || (err instanceof Error && /deadline/i.test(err.message));
}

function toUnavailable(err: unknown): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 14) {
    return new PlanClientError(
      'unavailable',
      `the Temporal server is not reachable; start it with npm start`,
    );
  }
  return err;
}
