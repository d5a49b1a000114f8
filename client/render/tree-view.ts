/**
 * How `agents plan tree` and `agents plan explain` present decisions (seed 004). Pure: the CLI picks a format,
 * these functions pick the keys and their order.
 */
import type { DecisionTree, DecisionTreeNode } from '../../domain/decision-tree';
import { depthFirst } from '../../domain/decision-tree';
import type { DecisionFields } from '../../domain/decision';

/** The views read every field of a recorded decision. */
export type ViewDecision = DecisionFields;

/** The columns of plain and table output: enough to read the tree and copy an id; json and yaml keep every key. */
export const TREE_COLUMNS = [
  'sequence_number',
  'depth',
  'decision_type',
  'decision_id',
  'parent_decision_id',
  'chosen_option',
  'superseded_by',
] as const;

/**
 * One row per node, breadth-first (level by level) as seed 004's get_tree returns them: for json, yaml, plain,
 * table. Keys are seed 004's field names, as `plan explain` has them; `depth` (the level, the root being 0) is the
 * only key of the tree rather than of the decision. A correcting decision also has `is_correction` and
 * `corrects_decision_id`.
 */
export function treeRows<T extends ViewDecision>(tree: DecisionTree<T>): Array<Record<string, unknown>> {
  return tree.nodes.map(({ decision: d, depth }) => ({
    sequence_number: d.seq,
    depth,
    decision_type: d.type,
    phase: d.phase,
    decision_id: d.decisionId,
    parent_decision_id: d.parentDecisionId,
    question: d.question,
    chosen_option: d.chosenOption,
    confidence_score: d.confidence,
    actor: d.actor,
    superseded_by: d.supersededBy,
    ...(d.isCorrection ? { is_correction: true, corrects_decision_id: d.correctsDecisionId } : {}),
  }));
}

export interface RichTreeStyle {
  type: (text: string) => string;
  dim: (text: string) => string;
}

const PLAIN_STYLE: RichTreeStyle = { type: (t) => t, dim: (t) => t };

/**
 * The indented tree of the rich format: type label, sequence number and the full 26-character ULID on every line,
 * so an id can be copied straight into `plan explain` or `plan correct`.
 */
export function richTreeLines<T extends ViewDecision>(
  tree: DecisionTree<T>,
  style: RichTreeStyle = PLAIN_STYLE,
  /** Lines to show under a decision, indented as its children are (`--subplans`: the plans it spawned). */
  under: (decision: T) => string[] = () => [],
): string[] {
  const nodes = depthFirst(tree);
  const byId = new Map(tree.nodes.map((node) => [node.decision.decisionId, node]));
  const lastChild = new Set<string>();
  for (const node of tree.nodes) {
    const last = node.childIds.at(-1);
    if (last !== undefined) lastChild.add(last);
  }
  const lines: string[] = [];
  for (const node of nodes) {
    const nodePrefix = prefix(node, byId, lastChild);
    lines.push(nodePrefix + label(node, style));
    const extra = under(node.decision);
    if (extra.length === 0) continue;
    // The node's own line continues down to its decision children; the extra lines sit beside that line.
    const continued =
      node.depth === 0
        ? ''
        : nodePrefix.slice(0, -4) + (lastChild.has(node.decision.decisionId) ? '    ' : '│   ');
    const bar = node.childIds.length > 0 ? '│ ' : '  ';
    for (const line of extra) lines.push(`${continued}${bar}${line}`);
  }
  if (tree.hiddenByDepth > 0)
    lines.push(style.dim(`(${tree.hiddenByDepth} deeper decisions hidden by --depth)`));
  if (tree.hiddenSuperseded > 0) {
    lines.push(
      style.dim(`(${tree.hiddenSuperseded} superseded decisions hidden; --show-superseded shows them)`),
    );
  }
  return lines;
}

function label<T extends ViewDecision>(node: DecisionTreeNode<T>, style: RichTreeStyle): string {
  const d = node.decision;
  const marks = [node.superseded ? 'superseded' : null, d.isCorrection ? 'correction' : null].filter(Boolean);
  return (
    `${style.type(d.type)} ${style.dim(`#${d.seq}`)} ${d.decisionId}  ${d.chosenOption}` +
    (marks.length > 0 ? ` ${style.dim(`(${marks.join(', ')})`)}` : '')
  );
}

function prefix<T extends ViewDecision>(
  node: DecisionTreeNode<T>,
  byId: Map<string, DecisionTreeNode<T>>,
  lastChild: Set<string>,
): string {
  if (node.depth === 0) return '';
  // Walk up to the root: each ancestor that still has siblings below it continues its vertical line.
  const parts: string[] = [lastChild.has(node.decision.decisionId) ? '└── ' : '├── '];
  let ancestor =
    node.decision.parentDecisionId === null ? undefined : byId.get(node.decision.parentDecisionId);
  while (ancestor !== undefined && ancestor.depth > 0) {
    parts.push(lastChild.has(ancestor.decision.decisionId) ? '    ' : '│   ');
    ancestor =
      ancestor.decision.parentDecisionId === null ? undefined : byId.get(ancestor.decision.parentDecisionId);
  }
  return parts.reverse().join('');
}

export interface ExplainOptions {
  showContext: boolean;
  showReasoning: boolean;
  /** The stored context (canonical JSON text), when --show-context found one. */
  context?: string | null;
}

/**
 * `plan explain`: identity, classification, content (alternatives always), who decided and with which model (its
 * token counts), downstream impact and correction metadata when set; the context snapshot and the reasoning only
 * when asked for.
 */
export function explainDict(d: ViewDecision, options: ExplainOptions): Record<string, unknown> {
  const dict: Record<string, unknown> = {
    decision_id: d.decisionId,
    plan_id: d.planId,
    sequence_number: d.seq,
    parent_decision_id: d.parentDecisionId,
    decision_type: d.type,
    phase: d.phase,
    question: d.question,
    chosen_option: d.chosenOption,
    alternatives_considered: d.alternatives,
    confidence_score: d.confidence,
    actor: d.actor,
    // Seed 001's PlanBuild model and token count: always present, null for a decision no model made.
    model_name: d.modelName,
    prompt_tokens: d.promptTokens,
    completion_tokens: d.completionTokens,
    created_at: d.createdAt,
  };
  if (d.downstreamDecisionIds.length > 0) dict.downstream_decision_ids = d.downstreamDecisionIds;
  if (d.downstreamPlanIds.length > 0) dict.downstream_plan_ids = d.downstreamPlanIds;
  if (d.artifactsProduced.length > 0) dict.artifacts_produced = d.artifactsProduced;
  if (d.isCorrection) {
    dict.is_correction = true;
    dict.corrects_decision_id = d.correctsDecisionId;
    dict.correction_reason = d.correctionReason;
  }
  if (d.supersededBy !== null) dict.superseded_by = d.supersededBy;
  if (options.showContext) {
    dict.hot_context_hash = d.hotContextHash;
    dict.hot_context_ref = d.hotContextRef;
    dict.relevant_resources = d.relevantResources;
    dict.actor_state_ref = d.actorStateRef;
    if (options.context !== undefined)
      dict.context = options.context === null ? null : parseJson(options.context);
  }
  if (options.showReasoning) {
    dict.rationale = d.rationale;
    dict.actor_reasoning = d.actorReasoning;
  }
  return dict;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
