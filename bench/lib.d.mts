// Types of the helpers of bench/lib.mjs that TypeScript scripts use (scripts/chaos/run.ts).
export const root: string;
export const wranglerJs: string;
export const quietEnv: NodeJS.ProcessEnv;
export function sleep(ms: number): Promise<void>;
export function freePort(): Promise<number>;
export function startWranglerDev(options?: { cwd?: string; args?: string[]; readyPath?: string }): Promise<{ base: string; stop(): void; pid: number | undefined }>;
/** A throwaway signing certificate (.pfx, password "bench") carrying the holder RUT 11111111-1. */
export function fakePfx(): Buffer;
