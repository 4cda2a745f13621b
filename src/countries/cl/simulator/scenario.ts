/** Scenario control (accept, reject, object, delay, down) of the simulated SII. */
import { z } from "zod";
import { type ScenarioRow } from "./store";

// ---- scenario control -------------------------------------------------------------------------------

export const scenarioSchema = z
  .object({
    mode: z.enum(["accept", "reject", "object", "delay", "down"]),
    count: z.number().int().min(1).max(10_000).optional(),
    rut: z.string().min(3).max(20).optional(),
    polls: z.number().int().min(1).max(1000).optional(),
    seconds: z.number().int().min(1).max(86_400).optional(),
    failure: z.enum(["http503", "error500", "reset"]).optional(),
  })
  .strict();

export function scenarioJson(s: ScenarioRow) {
  return {
    id: s.id,
    mode: s.mode,
    remaining: s.remaining,
    rut: s.rut,
    ...(s.mode === "delay" ? { polls: s.delayPolls, seconds: s.delaySeconds } : {}),
    ...(s.mode === "down" ? { failure: s.failure } : {}),
    created_at: s.createdAt,
  };
}
