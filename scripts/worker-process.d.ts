export declare const WORKER_NODE_FLAGS: readonly string[];
export declare function workerEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
