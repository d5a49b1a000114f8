/**
 * A subplan's spec, resolved the way `agents plan use` resolves a plan (domain/resolve.ts) but from its parent: the
 * action and profile from the catalog, the projects only among the parent's links, the arguments rendered over the
 * parent's values, the family fields and the depth limit from domain/subplans.ts. Strategize checks every subplan
 * step this way before a person is asked to approve the strategy; Execute resolves again, writes the child's row
 * and hands the spec to the workflow, which starts the child workflow with it.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { AutomationProfile, Project } from '../domain/catalog';
import { ERROR_TYPES } from '../domain/errors';
import type { PlanSpec } from '../domain/plan';
import { resolvePlanSpec } from '../domain/resolve';
import { renderTemplate, TemplateError, templateValues } from '../domain/steps';
import type { SubplanRequest, SubplanStep } from '../domain/steps';
import { childProjectLinks } from '../domain/project-link';
import { checkSubplanDepth, childPlanId, childRequests, MAX_SUBPLAN_DEPTH } from '../domain/subplans';
import type { InvariantStore } from '../storage/invariants';
import type { CatalogStore, PlanStore } from '../storage/types';
import type { PrepareSubplansInput, PrepareSubplansResult } from './contracts';
import type { SpecSource } from './specs';

export interface SubplanDependencies {
  plans: PlanStore;
  catalog: CatalogStore;
  invariants: InvariantStore;
}

/** Why a subplan step cannot run: bad input, which no retry fixes. */
function refuse(stepIndex: number, child: SubplanRequest, reason: string): never {
  throw ApplicationFailure.nonRetryable(
    `step ${stepIndex + 1}: subplan ${child.action}: ${reason}`,
    ERROR_TYPES.InvalidInput,
  );
}

export function createSubplanResolver(deps: SubplanDependencies) {
  const { catalog } = deps;

  /** The spec of one child; throws a non-retryable InvalidInput naming the step and the rule it broke. */
  async function resolveChild(
    parent: PlanSpec,
    stepIndex: number,
    child: SubplanRequest,
    planId: string,
    createdAt: string,
  ): Promise<PlanSpec> {
    const family = checkSubplanDepth(
      parent,
      parent.effectiveProfileSnapshot?.maxSubplanDepth ?? MAX_SUBPLAN_DEPTH,
    );
    if (!family.ok) refuse(stepIndex, child, family.error);
    const action = await catalog.getAction(child.action);
    if (action === null) refuse(stepIndex, child, 'unknown action (see agents action list)');
    const links = childProjectLinks(parent.projects, child.projects);
    if (!links.ok) refuse(stepIndex, child, links.error);
    const projects = new Map<string, Project>();
    for (const link of links.links) {
      const stored = await catalog.getProject(link.projectName);
      if (stored === null)
        refuse(stepIndex, child, `project ${link.projectName} is no longer in the catalog`);
      projects.set(link.projectName, stored.value);
    }
    let profile: AutomationProfile | null;
    if (child.profile !== null) {
      const stored = await catalog.getProfile(child.profile);
      if (stored === null)
        refuse(stepIndex, child, `unknown profile ${child.profile} (see agents profile list)`);
      profile = stored.value;
    } else {
      // The parent's profile as the parent froze it, not as the catalog holds it now: a family runs by one rule set.
      const snapshot = parent.effectiveProfileSnapshot;
      profile =
        snapshot === null
          ? null
          : {
              ...snapshot,
              description: '',
              maxSubplanDepth: snapshot.maxSubplanDepth ?? MAX_SUBPLAN_DEPTH,
              onTimeout: snapshot.onTimeout ?? 'cancel',
              approvers: snapshot.approvers ?? [],
              requiredApprovals: snapshot.requiredApprovals ?? 1,
            };
    }
    // The first link's values stand for the parent's: `{{project.name}}` in an argument means the parent's first.
    const firstLink = parent.projects[0];
    const values = firstLink === undefined ? {} : templateValues(parent, firstLink);
    const rawArguments: Record<string, string> = {};
    for (const [name, raw] of Object.entries(child.arguments)) {
      try {
        rawArguments[name] = renderTemplate(raw, values);
      } catch (err) {
        if (!(err instanceof TemplateError)) throw err;
        refuse(stepIndex, child, `argument ${name}: ${err.message}`);
      }
    }
    const resolved = resolvePlanSpec({
      planId,
      createdAt,
      createdBy: parent.createdBy,
      action: action.value,
      projects,
      links: links.links,
      profile,
      rawArguments,
      tags: [],
      description: child.description ?? `a subplan of ${parent.name} (${parent.planId})`,
      // An explicit level wins; a named profile brings its own; otherwise the child runs as its parent does.
      ...(child.automation !== null
        ? { automationLevel: child.automation }
        : child.profile === null
          ? { automationLevel: parent.automationLevel }
          : {}),
      inheritedInvariants: await deps.invariants.inherited(
        links.links.map((l) => l.projectName),
        action.value.name,
      ),
      parent: { parentPlanId: family.parentPlanId, rootPlanId: family.rootPlanId, depth: family.depth },
    });
    if (!resolved.ok) refuse(stepIndex, child, resolved.error);
    return resolved.spec;
  }

  /** Strategize's check: every child of every subplan step resolves (nothing is written). */
  async function checkSpawns(
    parent: PlanSpec,
    steps: ReadonlyArray<{ stepIndex: number; step: SubplanStep }>,
    at: string,
  ): Promise<void> {
    for (const { stepIndex, step } of steps) {
      for (const [childIndex, child] of childRequests(step).entries()) {
        await resolveChild(
          parent,
          stepIndex,
          child,
          childPlanId(parent.planId, { stepIndex, childIndex }),
          at,
        );
      }
    }
  }

  return { resolveChild, checkSpawns };
}

export function createSubplanActivities(deps: SubplanDependencies & { specOf: SpecSource }) {
  const { resolveChild } = createSubplanResolver(deps);
  return {
    /**
     * The specs of the children a subplan step spawns (those `children` names, at their generations), each with
     * its row and PLAN_CREATED written, so `plan list --parent` shows a child before its worker picks it up. A
     * retried call finds the rows and returns the specs they hold: what a child was created with never changes.
     */
    async prepareSubplans(input: PrepareSubplansInput): Promise<PrepareSubplansResult> {
      const parent = await deps.specOf({ planId: input.planId });
      const requests = childRequests(input.step);
      const specs: PlanSpec[] = [];
      for (const { childIndex, generation } of input.children) {
        const child = requests[childIndex];
        if (child === undefined) {
          throw ApplicationFailure.nonRetryable(
            `step ${input.stepIndex + 1} has no child ${childIndex}`,
            ERROR_TYPES.InvalidInput,
          );
        }
        const planId = childPlanId(parent.planId, { stepIndex: input.stepIndex, childIndex }, generation);
        const existing = await deps.plans.getSpec(planId);
        if (existing !== null) {
          specs.push(existing);
          continue;
        }
        const spec = await resolveChild(parent, input.stepIndex, child, planId, input.at);
        await deps.plans.recordPlanCreated({ spec, eventSeq: 0 });
        specs.push(spec);
      }
      return { specs };
    },
  };
}
