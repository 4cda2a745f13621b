// BENCH_SMOKE=1: every bench runs its whole path at its smallest meaningful size (one document, one
// repetition, the smallest envelope, a couple of companies), checks what it checks, prints its
// figures, and writes nothing to bench/results or docs (those hold the latest real run only).
// Targets are not held in a smoke run: figures at these sizes are noise. test/bench-smoke.node.test.ts
// runs every bench this way.

export const SMOKE = process.env.BENCH_SMOKE === "1";

/**
 * A bench's size knob: the environment variable `name` when set, else `smoke` in a smoke run, else
 * `full`.
 */
export function knob(name, full, smoke) {
  const given = process.env[name];
  if (given !== undefined && given !== "") return Number(given);
  return SMOKE ? smoke : full;
}

/** Says that a smoke run leaves the results alone (in place of writing `what`). */
export function notWritten(what) {
  console.log(`smoke run: ${what} not written`);
}

/** Prints a bench's line of targets met or not; a smoke run says instead that it holds none. */
export function targets(line) {
  console.log(SMOKE ? "targets: not held in a smoke run" : line);
}
