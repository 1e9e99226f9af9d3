// Concurrency leases: acquire, release, validate, and withLease around a
// function.

import { performance } from "node:perf_hooks";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { LeaseLostError, OverloadedError, TaskEndedError } from "./errors.js";
import { send } from "./send.js";
import { current, type Task } from "./task.js";
import { duration } from "./wire.js";

/** Report is how the downstream behaved under a lease, for governord's
 * adaptive limits. */
export interface Report {
  /** How long the work under the lease took, in milliseconds; 0: not
   * measured. */
  latencyMs?: number;
  /** The downstream signalled overload. */
  overloaded?: boolean;
}

/** LeaseOptions change how a lease is acquired. */
export interface LeaseOptions {
  /** The longest the lease may be held, in milliseconds: governord ends it
   * then, whatever the holder does. Unset: as long as session and task. */
  maxHoldMs?: number;
}

/** Lease is one slot of a concurrency class held by the client's session.
 * Release it once; later calls return the first result. */
export class Lease {
  /** A fencing token: a later grant has a larger id. A downstream that
   * refuses ids smaller than the largest it has seen cannot be reached by a
   * holder whose lease ended. */
  readonly id: bigint;
  readonly class: string;
  /** The task the lease was acquired on. */
  readonly nodeId: bigint;
  /** When governord ends the lease if still held; undefined without a
   * maximum hold. */
  readonly holdUntil: Date | undefined;
  readonly #task: Task;
  #released: Promise<void> | undefined;

  constructor(task: Task, id: bigint, cls: string, nodeId: bigint, holdUntil: Date | undefined) {
    this.#task = task;
    this.id = id;
    this.class = cls;
    this.nodeId = nodeId;
    this.holdUntil = holdUntil;
  }

  /** release returns the lease with a report on the downstream. A call
   * governord does not answer is re-sent, with the same request id, for up
   * to one session TTL. A lease that ended before (expired, or revoked with
   * its task or session) is a LeaseLostError. */
  release(report: Report = {}): Promise<void> {
    this.#released ??= this.#release(report);
    return this.#released;
  }

  async #release(report: Report): Promise<void> {
    const s = this.#task.session;
    if (s.ended !== undefined) {
      throw new LeaseLostError(`governor: lease ${this.id} ended with its session`, { cause: s.ended });
    }
    const requestId = this.#task.client.ids.next();
    const latency = report.latencyMs ? duration("latencyMs", report.latencyMs) : undefined;
    try {
      await send(s, "release", AbortSignal.timeout(Math.ceil(s.ttlMs)), s.ttlMs, (opts) =>
        s.api.release({ leaseId: this.id, latency, overloaded: report.overloaded ?? false, requestId }, opts),
      );
    } catch (e) {
      throw e instanceof TaskEndedError ? new LeaseLostError(e.message, { cause: e }) : e;
    }
  }

  /** validate resolves when the lease is still held and throws a
   * LeaseLostError saying how it ended otherwise. The lease can end right
   * after; the fencing id is the stronger guarantee. */
  async validate(): Promise<void> {
    const t = this.#task;
    t.session.check();
    const res = await send(t.session, "validate", undefined, 0, (opts) => t.session.api.validate({ leaseId: this.id }, opts));
    if (!res.valid) {
      throw new LeaseLostError(`governor: lease ${this.id} is no longer held: ${res.reason}`);
    }
  }
}

/** acquire waits in governord's fair queue for one slot of class on the
 * current task and its whole chain. The task's signal gives the wait up; a
 * grant that races it is given back by governord. */
export async function acquire(cls: string, opts: LeaseOptions = {}): Promise<Lease> {
  const t = current(`acquire("${cls}")`);
  const maxHold = opts.maxHoldMs !== undefined ? duration("maxHoldMs", opts.maxHoldMs) : undefined;
  const requestId = t.client.ids.next();
  const res = await send(t.session, `acquire ${cls}`, t.signal, t.client.resendMs, (o) =>
    t.session.api.acquire({ nodeId: t.id, class: cls, maxHold, requestId }, o),
  );
  const l = res.lease!;
  return new Lease(t, l.id, l.class, l.nodeId, l.holdUntil ? timestampDate(l.holdUntil) : undefined);
}

/** withLease holds a lease of class around fn and reports fn's latency
 * when it releases it; an OverloadedError thrown by fn (or given as its
 * error's cause) reports overload. fn's error comes first; a lease lost
 * meanwhile is thrown when fn succeeded. */
export async function withLease<T>(cls: string, fn: (lease: Lease) => Promise<T> | T, opts: LeaseOptions = {}): Promise<T> {
  const l = await acquire(cls, opts);
  const start = performance.now();
  let out: T;
  try {
    out = await fn(l);
  } catch (e) {
    const overloaded = e instanceof OverloadedError || (e instanceof Error && e.cause instanceof OverloadedError);
    await l.release({ latencyMs: performance.now() - start, overloaded }).catch(() => undefined);
    throw e;
  }
  await l.release({ latencyMs: performance.now() - start });
  return out;
}
