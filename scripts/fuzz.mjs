#!/usr/bin/env node
// `npm run fuzz [-- --requests N --seed S]`: the schema-driven fuzz (test/fuzz) with N requests
// (default 5,000) and a new seed each run (printed; pass it back with --seed to repeat a run). It runs
// inside workerd like the tests (real D1, R2, Queues, Durable Objects). `npm test` runs 400, seed 1515.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { parseArgs } from "node:util";
import { quietEnv, root } from "./local-env.mjs";

const { values } = parseArgs({ options: { requests: { type: "string", default: "5000" }, seed: { type: "string", default: String(Math.floor(Math.random() * 2 ** 31)) } } });
console.log(`fuzz: ${values.requests} requests, seed ${values.seed}`);
const r = spawnSync(process.execPath, [path.join(root, "node_modules/vitest/vitest.mjs"), "run", "--project", "workers", "test/fuzz"], {
  cwd: root,
  stdio: "inherit",
  env: { ...quietEnv, FUZZ_REQUESTS: values.requests, FUZZ_SEED: values.seed },
});
process.exit(r.status ?? 1);
