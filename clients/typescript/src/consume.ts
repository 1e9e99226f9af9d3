// Charging resources: consume now, or wait for scheduled admission.

import { performance } from "node:perf_hooks";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { ConsumeStatus, type ConsumeResponse } from "./gen/governor/v1/governor_pb.js";
import { DeniedError, InvalidArgumentError } from "./errors.js";
import { send } from "./send.js";
import { current } from "./task.js";
import { sleep } from "./timing.js";
import { duration, durationMs, int64 } from "./wire.js";

/** Resources and classes the client's helpers charge and hold. */
export const resourceHTTP = "http";
export const classHTTP = "http";
export const resourceRetry = "retry";
export const classAgents = "agents";

/** Balance is what a granted consume (or wait) leaves on the task's chain,
 * read at the tightest cap: the quota or rate cap with the least room. */
export interface Balance {
  /** False when no node on the chain caps the resource. */
  capped: boolean;
  /** What the tightest cap still admits, just after the charge. */
  remaining: bigint;
  /** The node whose cap is the tightest. */
  node: bigint;
  /** That cap's size: a quota's cap, a rate cap's burst. */
  limit: bigint;
  /** True when the tightest cap is a rate cap, which refills. */
  rate: boolean;
  /** When the tightest cap is full again; undefined for a quota. */
  reset: Date | undefined;
  /** "admitted", or "scheduled" when the charge holds a slot retryAfterMs
   * from governord's answer. */
  status: "admitted" | "scheduled";
  /** For "scheduled", the wait from the answer to the slot. */
  retryAfterMs: number;
}

function balance(m: ConsumeResponse): Balance {
  const scheduled = m.status === ConsumeStatus.SCHEDULED;
  return {
    capped: m.remaining !== undefined,
    remaining: m.remaining ?? 0n,
    node: m.capNodeId,
    limit: m.capLimit,
    rate: m.capIsRate,
    reset: m.resetTime ? timestampDate(m.resetTime) : undefined,
    status: scheduled ? "scheduled" : "admitted",
    retryAfterMs: scheduled && m.retryAfter ? durationMs(m.retryAfter) : 0,
  };
}

/** consume spends n units of resource on the current task, checked against
 * the task and every ancestor (quotas and rate caps) in one step, and
 * returns the balance of the tightest cap. n of 0 is a peek. A refusal is a
 * DeniedError carrying the whole denial. The call carries a request id and
 * is re-sent with it when the reply is lost, so it is never charged twice. */
export async function consume(resource: string, n: number | bigint = 1): Promise<Balance> {
  const amount = int64(`consume("${resource}") amount`, n);
  const t = current(`consume("${resource}")`);
  const requestId = t.client.ids.next();
  const res = await send(t.session, `consume ${resource}`, t.signal, t.client.resendMs, (opts) =>
    t.session.api.consume({ nodeId: t.id, resource, amount, requestId }, opts),
  );
  return balance(res);
}

/** The longest wait() waits without a timeoutMs, in milliseconds. */
export const defaultWaitMs = 60_000;

/** The longest max_wait governord accepts, in milliseconds. */
const maxWireWaitMs = 24 * 3600 * 1000;

/** WaitOptions bound a wait(). */
export interface WaitOptions {
  /** The longest wait from the call, in milliseconds (default 60000). */
  timeoutMs?: number;
}

/** wait spends n units of resource on the current task as consume does,
 * but when the chain's rate caps cannot admit them now it waits for room
 * for up to timeoutMs: governord books a slot and charges it at once, and
 * wait sleeps until the slot (status "scheduled"). A refusal that no wait
 * within the timeout cures is a DeniedError, charged nothing; one that no
 * wait at all cures has neverFits set. A refusal governord could not book
 * although its wait fits is slept out and asked again. The task's signal
 * cuts every sleep short; a slot booked stays charged. */
export async function wait(resource: string, n: number | bigint = 1, opts: WaitOptions = {}): Promise<Balance> {
  const amount = int64(`wait("${resource}") amount`, n);
  if (amount < 1n) {
    throw new InvalidArgumentError(`governor: wait for ${resource}: n must be 1 or more, got ${amount}; consume("${resource}", 0) peeks`);
  }
  const timeoutMs = opts.timeoutMs ?? defaultWaitMs;
  duration("timeoutMs", timeoutMs);
  const t = current(`wait("${resource}")`);
  const until = performance.now() + timeoutMs;
  for (;;) {
    const requestId = t.client.ids.next();
    const maxWait = duration("maxWait", Math.min(Math.max(until - performance.now(), 0), maxWireWaitMs));
    let b: Balance;
    try {
      const res = await send(t.session, `wait for ${resource}`, t.signal, Math.max(0, until - performance.now()), (o) =>
        t.session.api.consume({ nodeId: t.id, resource, amount, requestId, maxWait }, o),
      );
      b = balance(res);
    } catch (e) {
      if (!(e instanceof DeniedError) || e.neverFits || e.retryAfterMs <= 0 || until - performance.now() < e.retryAfterMs) {
        throw e;
      }
      await sleep(e.retryAfterMs, t.signal);
      continue;
    }
    if (b.status === "scheduled") {
      await sleep(b.retryAfterMs, t.signal);
    }
    return b;
  }
}
