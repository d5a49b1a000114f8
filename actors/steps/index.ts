/**
 * Steps, as the actors use them: the runner (./run.ts) and its safety rules, the glob listing an estimate shares
 * with it (./files.ts), the failure a step reports (./errors.ts); the runner starts commands through ./command.ts
 * and runs `replace` patterns in a thread of their own (./regex.ts).
 */
export { StepError } from './errors';
export { runStep, runValidation, targetWorkspace } from './run';
export type { StepEnv, StepReport } from './run';
export { globMatcher, listFiles } from './files';
