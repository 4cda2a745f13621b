/**
 * A bounded map whose entries live `ttlMs` in this isolate: the one mechanism behind the
 * per-isolate caches of control-plane reads (API keys and companies in src/accounts/access/cache.ts,
 * a company's certificate, CAF and settings in src/accounts/companies/control-cache.ts). The caller
 * gives the clock (`at`, ms), so tests control expiry. At `maxEntries` the oldest entry is dropped.
 */
export class IsolateCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  private forgets = 0;

  constructor(
    readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  /** The live entry, or undefined (an expired one is dropped). */
  get(key: string, at: number): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.until > at) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  set(key: string, value: V, at: number): V {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, until: at + this.ttlMs });
    return value;
  }

  delete(key: string): void {
    this.entries.delete(key);
    this.forgets++;
  }

  clear(): void {
    this.entries.clear();
    this.forgets++;
  }

  /** How many deletes and clears so far: a read begun before one must not fill the cache after it. */
  get generation(): number {
    return this.forgets;
  }

  /** `set`, unless something was forgotten since `generation` (a write may have made the value stale). */
  setIfUnchanged(key: string, value: V, at: number, generation: number): void {
    if (this.forgets === generation) this.set(key, value, at);
  }
}
