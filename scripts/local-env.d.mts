export const root: string;
export const wranglerJs: string;
export const quietEnv: NodeJS.ProcessEnv;
export function ensureDevVars(): Record<string, string>;
export function wrangler(args: string[], options?: { inherit?: boolean }): string;
export function spawnWrangler(args: string[], options?: import("node:child_process").SpawnOptions): import("node:child_process").ChildProcess;
export function applyLocalMigrations(options?: { inherit?: boolean }): string;
