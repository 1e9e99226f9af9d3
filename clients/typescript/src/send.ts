// Sending the calls that change state: once, and again with the same
// request id when the reply is lost.

import { performance } from "node:perf_hooks";
import type { CallOptions } from "@connectrpc/connect";
import { SessionLostError, UnavailableError, fromApi } from "./errors.js";
import type { Session } from "./session.js";
import { pause } from "./timing.js";

/** send makes a call of session s that changes state. The request the
 * call sends is built once, with its request id, by the caller; when
 * governord does not answer, the same request is sent again after a
 * backoff, for up to windowMs, so a lost reply is never applied twice. It
 * stops at once when signal aborts or the session ends, and throws the
 * client's error for any other refusal. */
export async function send<T>(
  s: Session,
  what: string,
  signal: AbortSignal | undefined,
  windowMs: number,
  call: (opts: CallOptions) => Promise<T>,
): Promise<T> {
  const until = performance.now() + windowMs;
  for (let attempt = 0; ; attempt++) {
    s.check();
    try {
      return await call({ signal, headers: s.headers });
    } catch (e) {
      const err = fromApi(what, e, signal);
      if (err instanceof SessionLostError) {
        s.lose(err);
      }
      if (!(err instanceof UnavailableError) || performance.now() >= until) {
        throw err;
      }
    }
    await pause(attempt, signal);
  }
}
