import type { Reporter, TestModule } from "vitest/node";

/**
 * Prints, after the run, the test files that held a worker longest: preparing the runner, the
 * environment, the setup files, importing the file and running its tests (the per-file parts of the
 * wall time; starting a worker's runtime is shared by the files it runs). Runs beside the default
 * reporter; `SLOWEST_FILES` sets how many lines (10 unless told).
 */
export function fileTime(module: TestModule): number {
  const d = module.diagnostic();
  return d.prepareDuration + d.environmentSetupDuration + d.setupDuration + d.collectDuration + d.duration;
}

export default class SlowestFilesReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    if (modules.length === 0) return;
    const count = Number(process.env.SLOWEST_FILES ?? 10);
    const rows = modules.map((m) => ({ file: `${m.project.name}:${m.relativeModuleId}`, ms: fileTime(m), state: m.state() }))
      .sort((a, b) => b.ms - a.ms);
    const total = rows.reduce((sum, r) => sum + r.ms, 0);
    const lines = rows.slice(0, count).map((r) => `${(r.ms / 1000).toFixed(1).padStart(8)} s  ${r.file}${r.state === "failed" ? "  (failed)" : ""}`);
    process.stdout.write(`\nSlowest test files (of ${rows.length}; ${(total / 1000).toFixed(0)} s in workers over all files):\n${lines.join("\n")}\n`);
  }
}
