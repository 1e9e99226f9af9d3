// Waiting: backoff with full jitter, and sleeps a signal can cut short.

/** jitter is a full-jitter backoff: a random wait up to base·2^attempt
 * milliseconds, capped at most. */
export function jitter(attempt: number, baseMs: number, mostMs: number): number {
  const ceil = attempt < 30 ? Math.min(baseMs * 2 ** attempt, mostMs) : mostMs;
  return ceil <= 0 ? 0 : Math.random() * ceil;
}

/** sleep waits ms milliseconds, or rejects with signal's reason when it
 * aborts first. An unref'd sleep does not keep the process alive. */
export function sleep(ms: number, signal?: AbortSignal, unref = false): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    if (unref) {
      timer.unref();
    }
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** pause sleeps the backoff before re-sending a call governord did not
 * answer, after attempt failures in a row. */
export function pause(attempt: number, signal?: AbortSignal): Promise<void> {
  return sleep(jitter(attempt, 20, 1000), signal);
}
