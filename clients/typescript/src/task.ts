// Tasks: nodes of governord's tree that this client created, carried
// through async calls by AsyncLocalStorage.

import { AsyncLocalStorage } from "node:async_hooks";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { NodeSpecSchema, RateAlgorithm, RateSchema, type NodeSpec } from "./gen/governor/v1/governor_pb.js";
import { InvalidArgumentError, NoTaskError, SessionLostError, TaskEndedError, taskEnded } from "./errors.js";
import type { Client } from "./client.js";
import type { Session } from "./session.js";
import { send } from "./send.js";
import { duration, int64 } from "./wire.js";

/** Rate is a rate cap: limit units per period, refilled with time. */
export interface Rate {
  /** Units admitted per period. */
  limit: number | bigint;
  /** The refill period in milliseconds. */
  periodMs: number;
  /** A leaky bucket's size; 0 or unset means the limit. */
  burst?: number | bigint;
  /** "token" (the default) or "leaky". */
  algorithm?: "token" | "leaky";
}

/** Spec describes a task to create. Caps it leaves out come from its
 * parent's defaults on governord. */
export interface Spec {
  /** The task's name, unique among its active siblings. */
  name: string;
  /** Caps on resources for the task's whole subtree: name to units. */
  quotas?: Record<string, number | bigint>;
  /** Concurrency limits for the task's whole subtree: class to leases. */
  limits?: Record<string, number | bigint>;
  /** Rate caps for the task's whole subtree: name to rate. */
  rates?: Record<string, Rate>;
  /** When the task ends as past its deadline; its signal fires then. */
  deadline?: Date;
  /** Order of the task's acquires among its tenant's: higher first. */
  priority?: number;
  /** A tenant's share of the fair queue; ignored below tenants. */
  weight?: number;
}

function caps(what: string, m: Record<string, number | bigint> | undefined): Record<string, bigint> {
  const out: Record<string, bigint> = {};
  for (const [k, v] of Object.entries(m ?? {})) {
    out[k] = int64(`${what}["${k}"]`, v);
  }
  return out;
}

/** wireSpec checks a spec and returns it as governord takes it. */
export function wireSpec(spec: Spec): NodeSpec {
  const out = create(NodeSpecSchema, {
    name: spec.name,
    quotas: caps("quotas", spec.quotas),
    limits: caps("limits", spec.limits),
    priority: spec.priority ?? 0,
    weight: spec.weight ?? 0,
  });
  if (spec.deadline) {
    if (Number.isNaN(spec.deadline.getTime())) {
      throw new InvalidArgumentError(`governor: task "${spec.name}": deadline is not a valid date`);
    }
    out.deadline = timestampFromDate(spec.deadline);
  }
  for (const [k, r] of Object.entries(spec.rates ?? {})) {
    out.rates[k] = create(RateSchema, {
      limit: int64(`rates["${k}"].limit`, r.limit),
      period: duration(`rates["${k}"].periodMs`, r.periodMs),
      burst: int64(`rates["${k}"].burst`, r.burst ?? 0),
      algorithm: r.algorithm === "leaky" ? RateAlgorithm.LEAKY_BUCKET : RateAlgorithm.TOKEN_BUCKET,
    });
  }
  return out;
}

/** The task each async flow runs in. */
export const storage = new AsyncLocalStorage<Task>();

/** currentTask returns the task the calling async flow runs in, or
 * undefined outside every task. */
export function currentTask(): Task | undefined {
  return storage.getStore();
}

/** current returns the live task the calling async flow runs in; what
 * names the call in the error. */
export function current(what: string): Task {
  const t = storage.getStore();
  if (!t) {
    throw new NoTaskError(what);
  }
  t.check();
  return t;
}

/** signal returns the AbortSignal of the task the calling async flow runs
 * in: it fires when the task ends for any reason. */
export function signal(): AbortSignal {
  const t = storage.getStore();
  if (!t) {
    throw new NoTaskError("signal()");
  }
  return t.signal;
}

/** Task is a node of governord's tree that this client created. Its
 * signal fires when it ends for any reason: closed, cancelled (here, by an
 * ancestor or by an operator), past its deadline, or its session lost; the
 * signal's reason says which. */
export class Task {
  readonly id: bigint;
  readonly name: string;
  readonly client: Client;
  readonly session: Session;
  /** The current watch stream has reported the task, or was open when it
   * was created; false after the stream is opened again. */
  watched = true;
  readonly #ac = new AbortController();
  readonly #cleanups: (() => void)[] = [];

  constructor(client: Client, session: Session, id: bigint, name: string, parent: Task | undefined, deadline: Date | undefined) {
    this.client = client;
    this.session = session;
    this.id = id;
    this.name = name;
    if (parent) {
      const onEnd = () => this.end(parent.signal.reason);
      parent.signal.addEventListener("abort", onEnd, { once: true });
      this.#cleanups.push(() => parent.signal.removeEventListener("abort", onEnd));
    }
    if (deadline) {
      const timer = setTimeout(() => this.end(taskEnded(name, id, "past its deadline")), Math.max(0, deadline.getTime() - Date.now()));
      this.#cleanups.push(() => clearTimeout(timer));
    }
  }

  /** The signal that fires when the task ends for any reason. */
  get signal(): AbortSignal {
    return this.#ac.signal;
  }

  /** check throws why the task is over, if it is. */
  check(): void {
    this.session.check();
    if (this.#ac.signal.aborted) {
      throw this.#ac.signal.reason;
    }
  }

  /** end fires the task's signal with why, once. */
  end(why: unknown): void {
    if (this.session.tasks.get(this.id) === this) {
      this.session.tasks.delete(this.id);
    }
    for (const f of this.#cleanups.splice(0)) {
      f();
    }
    if (!this.#ac.signal.aborted) {
      this.#ac.abort(why);
    }
  }

  /** close ends the task as done on governord, and its active subtasks as
   * cancelled, and fires its signal. Closing a task that has ended already
   * does nothing. A call governord does not answer is re-sent, with the
   * same request id, for up to one session TTL. */
  async close(): Promise<void> {
    const requestId = this.client.ids.next();
    await this.#finish("close task", (opts) => this.session.api.closeNode({ nodeId: this.id, requestId }, opts));
    this.end(taskEnded(this.name, this.id, "closed"));
  }

  /** cancel ends the task and its subtasks as cancelled on governord, with
   * a reason for governord's log (cut to its first 1024 bytes), and fires
   * its signal. */
  async cancel(reason: string): Promise<void> {
    const requestId = this.client.ids.next();
    const cut = Buffer.from(reason).subarray(0, 1024).toString().replace(/\uFFFD+$/, "");
    await this.#finish("cancel task", (opts) => this.session.api.cancelNode({ nodeId: this.id, reason: cut, requestId }, opts));
    this.end(taskEnded(this.name, this.id, "cancelled"));
  }

  async #finish(what: string, call: Parameters<typeof send>[4]): Promise<void> {
    if (this.#ac.signal.aborted || this.session.ended !== undefined) {
      return;
    }
    try {
      await send(this.session, what, AbortSignal.timeout(Math.ceil(this.session.ttlMs)), this.session.ttlMs, call);
    } catch (e) {
      if (!(e instanceof TaskEndedError || e instanceof SessionLostError)) {
        throw e;
      }
    }
  }
}

/** task runs fn in a subtask of the current task, as client.task does,
 * for library code that holds no client. Outside every task it throws a
 * NoTaskError. */
export async function task<T>(spec: Spec, fn: (task: Task) => Promise<T> | T): Promise<T> {
  return current("task()").client.task(spec, fn);
}
