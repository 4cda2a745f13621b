// Types of bench/smoke.mjs for the benches' TypeScript files (the vitest configs).
export const SMOKE: boolean;
export function knob(name: string, full: number, smoke: number): number;
export function notWritten(what: string): void;
export function targets(line: string): void;
