import type { DecisionDraft } from '../domain/decision';
import type { RunPhaseInput, RunPhaseResult } from './contracts';

const ACTOR = 'builtin';

/**
 * The work of each phase for plans started before actors existed (workflows/legacy-plan.ts): one `runPhase`
 * activity per phase, in which the built-in actor states how it will proceed and records that choice. Plans
 * started since run strategize/execute/apply instead; this stays until the legacy path is removed (ADR 0008).
 */
export function runBuiltinPhase(input: RunPhaseInput): RunPhaseResult {
  const { spec, phase, parentDecisionSeq } = input;
  const projects = spec.projects.map((p) => p.projectName).join(', ');
  const draft = (
    fields: Omit<DecisionDraft, 'parentSeq' | 'phase' | 'actor' | 'confidence'>,
  ): DecisionDraft => ({
    ...fields,
    confidence: null,
    parentSeq: parentDecisionSeq,
    phase,
    actor: ACTOR,
  });
  switch (phase) {
    case 'STRATEGIZE':
      return {
        summary: `Strategy for ${spec.actionName}: follow the action's steps on ${projects}`,
        decisions: [
          draft({
            type: 'strategy_choice',
            question: `How should ${spec.actionName} be carried out?`,
            chosenOption: `Follow the steps of ${spec.actionName} in order on ${projects}`,
            alternatives: ['Split the work into child plans per project'],
            rationale:
              spec.projects.length > 1
                ? 'The built-in actor runs steps sequentially; child plans arrive with plan hierarchy.'
                : 'One project: a single sequence of steps covers it.',
          }),
        ],
      };
    case 'EXECUTE': {
      const writable = spec.projects.filter((p) => !p.readOnly).map((p) => p.projectName);
      const readOnly = spec.projects.filter((p) => p.readOnly).map((p) => p.projectName);
      return {
        summary: `Executed ${spec.actionName} (attempt ${input.attempt})`,
        decisions: [
          draft({
            type: 'implementation_choice',
            question: 'Where should the changes be produced?',
            chosenOption:
              'In a sandbox copy of each writable project, compared against the project afterwards',
            alternatives: ['Edit the projects in place'],
            rationale:
              'A sandbox keeps the projects untouched until Apply validates and writes the changeset.',
          }),
          {
            ...draft({
              type: 'resource_selection',
              question: 'Which projects may this plan change?',
              chosenOption:
                writable.length > 0 ? writable.join(', ') : 'none (every linked project is read-only)',
              alternatives: readOnly,
              rationale:
                readOnly.length > 0
                  ? `${readOnly.join(', ')} linked read-only: read, never written.`
                  : 'Every linked project is writable.',
            }),
            // Under the implementation choice it refines, recorded in the same batch.
            parentSeq: input.firstDecisionSeq,
          },
        ],
      };
    }
    case 'APPLY':
      return {
        summary: `Applied the changeset of ${spec.actionName} to ${projects}`,
        decisions: [
          draft({
            type: 'tool_invocation',
            question: 'How should the changeset be written?',
            chosenOption: 'Validate every path first, then write each file atomically (temp file + rename)',
            alternatives: ['Write files in place as they are processed'],
            rationale:
              'Validating the whole changeset before the first write means a refusal leaves nothing half-written.',
          }),
        ],
      };
  }
}
