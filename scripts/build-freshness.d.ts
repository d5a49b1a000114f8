/** Types of build-freshness.js, plain CommonJS so that bin/agents.js can use it before anything is compiled. */
export type SourceSnapshot = Record<string, [mtimeMs: number, size: number]>;
export type BuildCheck = { fresh: true } | { fresh: false; reason: string };

/** The compiled CLI entry, relative to the repository root. */
export const ENTRY: string;
export const SOURCE_DIRS: readonly string[];
export function snapshotSources(root: string): SourceSnapshot;
export function checkBuild(root: string): BuildCheck;
export function writeStamp(root: string, files: SourceSnapshot): void;
export function removeStamp(root: string): void;
