#!/usr/bin/env node
// Hostile XML inside workerd: verifyInbound on each hostile shape of test/helpers/hostile-xml.ts
// (attributes, nesting, huge values, names, comments, PIs, character references, tiny nodes, ...) at
// about 1 MB and at the received-file limit, against an ordinary signed EnvioDTE of the same length
// in the same run; target: every ratio at most 3. Prints the table and writes the latest run to
// bench/results/hostile.json. HOSTILE_SIZES=1000000 runs one size (comma-separated lengths). A smoke
// run (BENCH_SMOKE=1): every shape at 100,000 bytes, one round, no target, nothing written.
import { runWorkerdBench } from "./workerd-bench.mjs";

process.exit(runWorkerdBench("hostile", "bench/hostile/vitest.config.ts"));
