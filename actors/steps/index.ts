/**
 * Steps, as the actors use them: the runner (./run.ts) and its safety rules, the glob listing an estimate shares
 * with it (./files.ts); the runner starts commands through ./command.ts.
 */
export { runStep, runValidation, StepError, targetWorkspace } from './run';
export type { StepEnv, StepReport } from './run';
export { globMatcher, listFiles } from './files';
