// retry: retries that share the task's "retry" budget at every depth.

import {
  BadKeyError,
  ClosedError,
  DeniedError,
  ForbiddenError,
  InvalidArgumentError,
  NoTaskError,
  NotFoundError,
  RetryBudgetError,
  SessionLostError,
  TaskEndedError,
} from "./errors.js";
import { consume, resourceRetry } from "./consume.js";
import { currentTask } from "./task.js";
import { jitter, sleep } from "./timing.js";

/** RetryOptions change how retry() retries. */
export interface RetryOptions {
  /** Attempts of one retry(), the first included; at least 1 (default 10). */
  attempts?: number;
  /** Full-jitter backoff: before retry k, a random wait up to
   * baseMs·2^(k-1), capped at maxMs (defaults 50 and 5000). */
  baseMs?: number;
  maxMs?: number;
  /** Which errors are retried; by default every error but the client's
   * final ones (denied, task ended, session lost, forbidden, not found,
   * invalid, bad key, no task, closed) and aborts. */
  retryIf?: (err: unknown) => boolean;
}

const final = [
  DeniedError,
  TaskEndedError,
  SessionLostError,
  ForbiddenError,
  NotFoundError,
  InvalidArgumentError,
  BadKeyError,
  NoTaskError,
  ClosedError,
];

/** retryable is retry()'s default choice of what to retry. */
export function retryable(err: unknown): boolean {
  if (err instanceof Error && (err.name === "AbortError" || err.name === "TimeoutError")) {
    return false;
  }
  return !final.some((k) => err instanceof k);
}

/** retry calls fn until it succeeds, up to the attempts allowed. The
 * first attempt is free; every retry, at any nesting depth, first consumes
 * one "retry" unit from the current task, so nested loops share one
 * budget. When the budget is spent the last error is thrown at once as a
 * RetryBudgetError, and enclosing retry() loops throw it too without
 * retrying. Outside every task the first retry finds no budget: fn runs
 * once. The task's signal cuts the backoff short. */
export async function retry<T>(fn: () => Promise<T> | T, opts: RetryOptions = {}): Promise<T> {
  const attempts = Math.max(1, Math.floor(opts.attempts ?? 10));
  const baseMs = opts.baseMs ?? 50;
  const maxMs = opts.maxMs ?? 5000;
  const retryIf = opts.retryIf ?? retryable;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof RetryBudgetError || attempt >= attempts || !retryIf(e)) {
        throw e;
      }
      try {
        await consume(resourceRetry, 1);
      } catch (why) {
        throw new RetryBudgetError(e, why);
      }
    }
    await sleep(jitter(attempt - 1, baseMs, maxMs), currentTask()?.signal);
  }
}
