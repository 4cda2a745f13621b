#!/usr/bin/env node
// Reception benchmark inside workerd (real D1 and R2): received DTEs verified and stored per second
// from e-mails of 1, 50 and 500 DTEs through the Worker's email() handler, and the verification CPU
// per DTE against its crypto floor (bench/reception/fixture.ts cryptoFloor: the verifies and digests
// it cannot do without) measured in the same run. See bench/reception/reception.bench.test.ts.
// Writes the latest run to bench/results/reception.json. A smoke run (BENCH_SMOKE=1): the envelope
// of 1 DTE only, 3 slices, 1 block, 1 e-mail, nothing written.
import { runWorkerdBench } from "./workerd-bench.mjs";

process.exit(runWorkerdBench("reception", "bench/reception/vitest.config.ts"));
