/** Operations: master key rotation progress and dead-lettered queue messages. */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const KEY_ROTATION_PHASES = ["certificates", "webhooks", "cafs", "done"] as const;

export const keyRotations = sqliteTable("key_rotations", {
  /** The master key version everything is being re-sealed to. */
  version: integer("version").primaryKey(),
  phase: text("phase", { enum: KEY_ROTATION_PHASES }).notNull().default("certificates"),
  /** The last id handled in the phase's table (ids are walked in order). */
  cursor: text("cursor").notNull().default(""),
  resealed: integer("resealed").notNull().default(0),
  startedAt: text("started_at").notNull(),
  finishedAt: text("finished_at"),
});

export const DEAD_LETTER_QUEUES = ["issuance", "webhooks", "email_events"] as const;
export const DEAD_LETTER_STATUSES = ["DEAD", "REDRIVEN"] as const;

export const deadLetters = sqliteTable(
  "dead_letters",
  {
    id: text("id").primaryKey(),
    queue: text("queue", { enum: DEAD_LETTER_QUEUES }).notNull(),
    messageId: text("message_id").notNull(),
    companyId: text("company_id").notNull(),
    /** The message body (JSON, ids only). */
    body: text("body").notNull(),
    attempts: integer("attempts").notNull(),
    status: text("status", { enum: DEAD_LETTER_STATUSES }).notNull().default("DEAD"),
    createdAt: text("created_at").notNull(),
    redrivenAt: text("redriven_at"),
  },
  (t) => [uniqueIndex("dead_letters_message_uq").on(t.queue, t.messageId), index("dead_letters_company_idx").on(t.companyId, t.status, t.createdAt)],
);
