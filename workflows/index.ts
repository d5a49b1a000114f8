/** The worker bundles this module: every workflow type the engine registers is exported here. */
export { planWorkflow } from './plan';
