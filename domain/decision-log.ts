/**
 * Collects the decisions one activity makes, in order, with the sequence numbers the workflow will give them.
 * The workflow hands an activity the first free sequence number and the decision the phase hangs under; the
 * activity returns the drafts in order, so draft i gets number firstSeq + i. Handing out those numbers here lets
 * a decision name a parent recorded in the same batch (a tool_invocation under its strategy step).
 */
import type { DecisionDraft } from './decision';
import type { Phase } from './lifecycle';

export type DecisionEntry = Omit<DecisionDraft, 'parentSeq' | 'phase' | 'actor'> & {
  /** Defaults to the phase's parent (the last decision of the phase before). */
  parentSeq?: number;
  /** Defaults to the log's actor. */
  actor?: string;
};

export class DecisionLog {
  private readonly entries: DecisionDraft[] = [];

  constructor(
    private readonly options: { firstSeq: number; parentSeq: number; phase: Phase; actor: string },
  ) {}

  /** The decision this phase's top-level decisions hang under. */
  get phaseParent(): number {
    return this.options.parentSeq;
  }

  /** The sequence number the next recorded decision will get. */
  get nextSeq(): number {
    return this.options.firstSeq + this.entries.length;
  }

  /** Records a decision and returns its sequence number, to be used as a later decision's parentSeq. */
  record(entry: DecisionEntry): number {
    const seq = this.nextSeq;
    const { parentSeq, actor, ...fields } = entry;
    const parent = parentSeq ?? this.options.parentSeq;
    if (parent >= seq) throw new RangeError(`a decision's parent (${parent}) must come before it (${seq})`);
    this.entries.push({
      ...fields,
      parentSeq: parent,
      phase: this.options.phase,
      actor: actor ?? this.options.actor,
    });
    return seq;
  }

  /** The drafts in recording order: draft i gets sequence number firstSeq + i. */
  drafts(): DecisionDraft[] {
    return [...this.entries];
  }
}
