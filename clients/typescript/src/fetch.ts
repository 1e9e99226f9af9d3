// governedFetch: fetch that charges and holds "http" for every request.

import { performance } from "node:perf_hooks";
import { classHTTP, consume, resourceHTTP } from "./consume.js";
import { acquire, type Lease, type Report } from "./lease.js";
import { current } from "./task.js";

/** How long a governed request holds its lease when no maxHoldMs is
 * given: a body never read to its end frees its slot then. */
export const defaultFetchHoldMs = 60_000;

/** FetchOptions configure governedFetch. */
export interface FetchOptions {
  /** The fetch underneath; the global fetch by default. */
  fetch?: typeof globalThis.fetch;
  /** The longest a request holds its lease, in milliseconds. */
  maxHoldMs?: number;
}

/** governedFetch returns a fetch that governs each request with the
 * current task: it charges one "http" unit, holds one "http" lease until
 * the response body has been read to its end, cancelled or has failed (or
 * the maximum hold runs out), and reports the time to the response and
 * whether the downstream signalled overload: a 429 or 503, or a
 * Retry-After header (seconds or an HTTP date) on any answer but a
 * redirect. It never sleeps: the response goes to the caller, and the
 * report feeds governord's adaptive limit of the class. The request is
 * aborted when the task ends. Outside every task it throws a NoTaskError. */
export function governedFetch(opts: FetchOptions = {}): typeof globalThis.fetch {
  const base = opts.fetch ?? globalThis.fetch;
  const maxHoldMs = opts.maxHoldMs ?? defaultFetchHoldMs;
  return async (input, init) => {
    const t = current("fetch");
    await consume(resourceHTTP, 1);
    const lease = await acquire(classHTTP, { maxHoldMs });
    const start = performance.now();
    let res: Response;
    try {
      const signal = init?.signal ? AbortSignal.any([init.signal, t.signal]) : t.signal;
      res = await base(input, { ...init, signal });
    } catch (e) {
      await lease.release({ latencyMs: performance.now() - start }).catch(() => undefined);
      throw e;
    }
    return leased(res, lease, { latencyMs: performance.now() - start, overloaded: overloaded(res) });
  };
}

/** overloaded says whether a response signals overload: 429, 503, or a
 * valid Retry-After on anything but a redirect, where the header only
 * delays the redirect. */
export function overloaded(res: Response): boolean {
  if (res.status === 429 || res.status === 503) {
    return true;
  }
  if (res.status >= 300 && res.status < 400) {
    return false;
  }
  return validRetryAfter(res.headers.get("retry-after"));
}

/** validRetryAfter says whether v is a Retry-After value: a number of
 * seconds or an HTTP date. */
export function validRetryAfter(v: string | null): boolean {
  if (!v) {
    return false;
  }
  return /^\d+$/.test(v) || (/^[A-Za-z]{3},? /.test(v) && !Number.isNaN(Date.parse(v)));
}

/** leased returns res with a body that releases the lease when it has
 * been read to its end, cancelled or has failed. A response without a body
 * releases it at once. */
async function leased(res: Response, lease: Lease, report: Report): Promise<Response> {
  if (res.body === null) {
    await lease.release(report);
    return res;
  }
  const reader = res.body.getReader();
  const done = () => lease.release(report).catch(() => undefined);
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done: end } = await reader.read();
        if (end) {
          await done();
          controller.close();
        } else {
          controller.enqueue(value);
        }
      } catch (e) {
        await done();
        controller.error(e);
      }
    },
    async cancel(reason) {
      await done();
      await reader.cancel(reason);
    },
  });
  const out = new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  Object.defineProperties(out, { url: { value: res.url }, redirected: { value: res.redirected } });
  return out;
}
