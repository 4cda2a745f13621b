/**
 * Keeps vitest's answer to "which module is this specifier?" for the rest of a test file.
 *
 * The Workers vitest plugin imports the Worker's main module through vitest's module runner on every
 * invocation of an entrypoint: each queue batch, each Durable Object fetch, RPC call or alarm, each
 * `SELF.fetch`. Every such import first asks vitest's main process to resolve the specifier over RPC,
 * and an invocation made by background work (a queue consumer, a store's alarm) as a test file's
 * environment closes failed the whole run with every test green ("Closing rpc while \"resolve\" was
 * pending", after test/pipeline/fidelity-rules.test.ts, 2026-12-02). Within one file the answer for
 * a specifier never changes (the plugin has no watch mode in a run), so the first is kept: later
 * invocations find the module without leaving workerd. The module itself is already cached by the
 * runner; only the resolution went over the wire.
 *
 * This reaches into vitest's runner (`__vitest_mocker__.moduleRunner.vitestOptions.transport`); if a
 * vitest upgrade moves it, the setup fails loudly here instead of the flake coming back unseen.
 */
type Resolved = { id: string; url: string; file?: string | null } | null | undefined;
type Transport = { resolveId: (id: string, importer?: string) => Promise<Resolved> };

const MARK = Symbol.for("dte.test.resolveCache");
export {};

function runnerTransport(): Transport & { [MARK]?: true } {
  const mocker = (globalThis as { __vitest_mocker__?: { moduleRunner?: { vitestOptions?: { transport?: Transport } } } }).__vitest_mocker__;
  const transport = mocker?.moduleRunner?.vitestOptions?.transport;
  if (typeof transport?.resolveId !== "function") {
    throw new Error("test/setup/resolve-cache.ts: vitest's module runner no longer exposes vitestOptions.transport.resolveId; see the comment at the top of this file");
  }
  return transport;
}

const transport = runnerTransport();
if (!transport[MARK]) {
  const resolve = transport.resolveId.bind(transport);
  const kept = new Map<string, Promise<Resolved>>();
  transport.resolveId = (id, importer) => {
    const key = `${id}\u0000${importer ?? ""}`;
    let answer = kept.get(key);
    if (!answer) {
      answer = resolve(id, importer).then((r) => {
        if (!r) kept.delete(key); // an unresolved specifier is asked again: it may be a real error
        return r;
      }, (err: unknown) => {
        kept.delete(key);
        throw err;
      });
      kept.set(key, answer);
    }
    return answer;
  };
  transport[MARK] = true;
}
