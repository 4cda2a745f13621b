import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

/**
 * One instance per (company, document type): the only writer of folio state.
 * Work in progress: the allocation logic lands with the folio-allocator issue.
 */
export class FolioAllocator extends DurableObject<Env> {
  async ping(): Promise<string> {
    return "pong";
  }
}
