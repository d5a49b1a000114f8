/** Types of postgres-bin.js, plain CommonJS so that jest.config.js can use it. */
export function findPostgresBin(env?: NodeJS.ProcessEnv): string | null;
export function postgresUnavailableReason(env?: NodeJS.ProcessEnv): string | null;
