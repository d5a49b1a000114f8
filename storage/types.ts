/**
 * What storage gives back: plain records in the domain's words, never Prisma types, so callers (activities,
 * CLI, tests) do not depend on the ORM.
 */
import type {
  PlanEventType,
  RecordPlanCreatedInput,
  RecordPlanStateInput,
  RecordPlanStateResult,
} from '../activities/contracts';
import type { Action, AutomationProfile, Project, Stored } from '../domain/catalog';
import type { DecisionType } from '../domain/decision';
import type { Phase, ProcessingState } from '../domain/lifecycle';
import type { PlanFields } from '../domain/plan';

/** The plan row: exactly the durable fields of a plan. */
export type PlanRecord = PlanFields;

export interface PlanEventRecord {
  planId: string;
  seq: number;
  type: PlanEventType;
  phase: Phase;
  state: ProcessingState;
  actor: string;
  message: string | null;
  at: string;
}

export interface DecisionRecord {
  decisionId: string;
  planId: string;
  seq: number;
  parentDecisionId: string | null;
  type: DecisionType;
  phase: Phase;
  question: string;
  chosenOption: string;
  alternatives: string[];
  confidence: number | null;
  rationale: string;
  actor: string;
  createdAt: string;
}

export interface PlanFilter {
  phase?: Phase;
  state?: ProcessingState;
  actionName?: string;
  projectName?: string;
  limit?: number;
}

export interface PlanStore {
  /** Inserts the plan row and its PLAN_CREATED event; a second call with the same input changes nothing. */
  recordPlanCreated(input: RecordPlanCreatedInput): Promise<void>;
  /**
   * In one transaction: the event (planId, eventSeq), the plan row's phase/state/error/updatedAt, and the
   * decisions (planId, seq). Replaying the same input writes nothing new and returns the same decision ids.
   */
  recordPlanState(input: RecordPlanStateInput): Promise<RecordPlanStateResult>;
  getPlan(planId: string): Promise<PlanRecord | null>;
  /** Newest first. */
  listPlans(filter?: PlanFilter): Promise<PlanRecord[]>;
  /** By sequence number. */
  listEvents(planId: string): Promise<PlanEventRecord[]>;
  /** By sequence number. */
  listDecisions(planId: string): Promise<DecisionRecord[]>;
}

/**
 * Actions, projects and automation profiles, keyed by their namespaced name. `put` validates nothing itself:
 * callers pass objects already parsed by the domain schemas. Names are unique per kind.
 */
export interface CatalogStore {
  /** Inserts or replaces (by name). Returns true when the name was new. */
  putAction(action: Action, options?: { builtIn?: boolean }): Promise<boolean>;
  getAction(name: string): Promise<Stored<Action> | null>;
  listActions(): Promise<Stored<Action>[]>;
  /** False when there was nothing to remove. */
  removeAction(name: string): Promise<boolean>;

  putProject(project: Project): Promise<boolean>;
  getProject(name: string): Promise<Stored<Project> | null>;
  listProjects(): Promise<Stored<Project>[]>;
  removeProject(name: string): Promise<boolean>;

  putProfile(profile: AutomationProfile): Promise<boolean>;
  getProfile(name: string): Promise<Stored<AutomationProfile> | null>;
  listProfiles(): Promise<Stored<AutomationProfile>[]>;
  removeProfile(name: string): Promise<boolean>;
}
