import { EngineError } from "../../src/countries/cl/errors";

/** The EngineError `fn` throws; any other outcome fails the test. */
export function engineError(fn: () => unknown): EngineError {
  try {
    fn();
  } catch (e) {
    if (e instanceof EngineError) return e;
    throw e;
  }
  throw new Error("expected an EngineError");
}
