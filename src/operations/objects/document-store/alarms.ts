/**
 * The document store's one alarm, shared by every kind of work a store does on its own clock.
 * Each kind is a task that says when it is next due and does its work; the alarm fires at
 * the earliest, runs every task (each one finds what is due itself and does nothing otherwise), then
 * is set again at the new earliest. A task's failure is logged and does not stop the others: the
 * alarm is set again whatever happens, so the work is tried again.
 *
 * The alarm time is kept in memory (read once when the store starts) so that bringing it forward
 * after a write costs no storage read. Outside the alarm itself it is only brought forward, except
 * after a write that did a task's work from outside (`relievedBy`: the fan-out's mark of the events a
 * notice announced), when it is set again from every task; an alarm that fires early finds nothing
 * due and sets the next time.
 */
import { describeError, log } from "../../../lib/log";

export interface StoreAlarmTask {
  readonly name: string;
  /** When this task next has work (epoch ms), or null when it has none. Synchronous: reads the store's SQLite. */
  nextAt(now: number): number | null;
  /** Does the work due at `now` (bounded). */
  run(now: number): Promise<void>;
  /** Whether a statement that wrote rows may have made this task due sooner (e.g. it names the task's table). */
  touchedBy(sql: string): boolean;
  /**
   * Whether a statement that wrote rows did this task's work from outside (the fan-out marking the
   * events a notice announced): the alarm is then set again from every task, later if need be, so no
   * alarm fires for work already done.
   */
  relievedBy?(sql: string): boolean;
}

export class StoreAlarms {
  private scheduled: number | null = null;

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly tasks: readonly StoreAlarmTask[],
  ) {}

  /** When the store starts: learn the alarm already set, and set one if a task is due and none is (work left from before). */
  async start(now: number = Date.now()): Promise<void> {
    this.scheduled = await this.storage.getAlarm();
    await this.bringForward(this.tasks, now);
  }

  /** After statements that wrote rows: the tasks they touch may be due sooner than the alarm. */
  async afterWrite(sqls: readonly string[], now: number = Date.now()): Promise<void> {
    if (this.tasks.some((t) => t.relievedBy && sqls.some((s) => t.relievedBy!(s)))) return this.reset(now);
    const touched = this.tasks.filter((t) => sqls.some((s) => t.touchedBy(s)));
    if (touched.length > 0) await this.bringForward(touched, now);
  }

  /** The alarm handler: every task, then the next time. */
  async fire(now: number = Date.now()): Promise<void> {
    this.scheduled = null;
    try {
      for (const task of this.tasks) {
        try {
          await task.run(now);
        } catch (err) {
          log("warn", "document store alarm task failed, the next alarm retries", { task: task.name, error: describeError(err) });
        }
      }
    } finally {
      const next = this.earliest(this.tasks, Date.now());
      if (next !== null) await this.set(next);
    }
  }

  /** When the alarm is set (for tests and operations). */
  get scheduledAt(): number | null {
    return this.scheduled;
  }

  /** The alarm at the earliest time any task is due (earlier or later than now set), or none. */
  private async reset(now: number): Promise<void> {
    const next = this.earliest(this.tasks, now);
    if (next === this.scheduled) return;
    if (next !== null) return this.set(next);
    await this.storage.deleteAlarm();
    this.scheduled = null;
  }

  private async bringForward(tasks: readonly StoreAlarmTask[], now: number): Promise<void> {
    const next = this.earliest(tasks, now);
    if (next !== null && (this.scheduled === null || next < this.scheduled)) await this.set(next);
  }

  private earliest(tasks: readonly StoreAlarmTask[], now: number): number | null {
    const due = tasks.map((t) => t.nextAt(now)).filter((t): t is number => t !== null);
    return due.length === 0 ? null : Math.min(...due);
  }

  private async set(at: number): Promise<void> {
    await this.storage.setAlarm(at);
    this.scheduled = at;
  }
}
