import type { FolioStore } from "./storage";

export interface AllocatorScope {
  companyId: string;
  documentType: string;
}

/**
 * The company id and document type an allocator serves. They come from the object's name
 * ("<companyId>:<documentType>") and are stored on first use: alarms and some runtimes do not carry
 * the name.
 */
export class ScopeRecord {
  private cached: AllocatorScope | null = null;

  constructor(
    private readonly store: FolioStore,
    private readonly objectName: string | undefined,
  ) {}

  /** Reads the stored scope, or stores the one the object's name gives (when it gives one). */
  remember(): void {
    const stored = this.store.getMeta("company_id");
    const storedType = this.store.getMeta("document_type");
    if (stored !== null && storedType !== null) {
      this.cached = { companyId: stored, documentType: storedType };
      return;
    }
    const name = this.objectName;
    if (!name) return;
    const i = name.lastIndexOf(":");
    if (i <= 0 || i === name.length - 1) return;
    const companyId = name.slice(0, i);
    const documentType = name.slice(i + 1);
    this.store.setMeta("company_id", companyId);
    this.store.setMeta("document_type", documentType);
    this.cached = { companyId, documentType };
  }

  /** Whether the scope is known (remembering it first when it is not yet). */
  known(): boolean {
    if (!this.cached) this.remember();
    return this.cached !== null;
  }

  /** The scope; throws when the object was not addressed by name and has none stored. */
  get(): AllocatorScope {
    if (!this.cached) this.remember();
    if (!this.cached) {
      throw new Error('FolioAllocator must be addressed by idFromName("<companyId>:<documentType>")');
    }
    return this.cached;
  }
}
