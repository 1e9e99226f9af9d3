// Following a cluster's leader: with several addresses, every call goes to
// the member believed to lead, as the Go SDK's calls do.

import type { DescMessage, DescMethodStreaming, DescMethodUnary, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type ContextValues, type Interceptor, type StreamResponse, type Transport, type UnaryResponse } from "@connectrpc/connect";
import { createConnectTransport, Http2SessionManager } from "@connectrpc/connect-node";
import type { Connection } from "./config.js";
import { jitter, sleep } from "./timing.js";

/** The response metadata by which a member that does not lead names the
 * leader's API address, host:port, when it answers Unavailable. */
export const leaderHeader = "Governor-Leader";

/** Bounds of the attempts of one call across the addresses: passes over
 * the list, and the backoff's first ceiling and longest wait (ms). */
const roundsPerCall = 3;
const backoffBaseMs = 10;
const backoffMaxMs = 500;

/** The calls that change nothing, or nothing more when repeated, and need
 * no request id to be sent again after an unknown outcome. */
const replayable = new Set(["GetNode", "Validate", "Explain", "Heartbeat"]);

/** Errors of a connection that was never made: nothing reached any node. */
const unsentCodes = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

/** The codes a connection that failed under a call gives it (a reset
 * stream is Canceled), which a member may also answer: they leave the
 * outcome unknown. */
const transportCodes = new Set([Code.Unavailable, Code.Unknown, Code.Internal, Code.Canceled]);

/** What one attempt of a call came to. */
type Outcome = "answered" | "redirected" | "unsent" | "unanswered";

/** Router says where calls go: the member believed to lead. It starts at
 * the first address, moves to the address a member names as the leader,
 * and, when the member it holds fails, moves on through the list: past
 * that member when it is listed, past the last listed one it held
 * otherwise (a leader a member named need not be listed). */
export class Router {
  /** host:port of every address, in the order given. */
  readonly addrs: string[];
  #cur: string;
  #at = 0;

  constructor(urls: string[]) {
    this.addrs = urls.map((u) => u.slice(u.indexOf("://") + 3));
    this.#cur = this.addrs[0]!;
  }

  /** target is where the next call goes. */
  target(): string {
    return this.#cur;
  }

  /** follow sends the next calls to leader, which a member named. */
  follow(leader: string): void {
    this.#cur = leader;
  }

  /** failed moves past addr, which did not answer; nothing moves when the
   * calls already go elsewhere, so concurrent failures move once. */
  failed(addr: string): void {
    if (this.#cur !== addr) {
      return;
    }
    const i = this.addrs.indexOf(addr);
    if (i >= 0) {
      this.#at = i;
    }
    this.#at = (this.#at + 1) % this.addrs.length;
    this.#cur = this.addrs[this.#at]!;
  }

  /** after moves the router as an attempt that went to addr and failed
   * with err says, and says what the attempt came to. signal is the
   * call's: a call its caller ended is answered. */
  after(addr: string, err: unknown, signal?: AbortSignal): Outcome {
    const ce = err instanceof ConnectError ? err : undefined;
    if (ce?.code === Code.Unavailable) {
      const leader = ce.metadata.get(leaderHeader) ?? "";
      if (isHostPort(leader)) {
        this.follow(leader);
        return "redirected";
      }
    }
    if (systemCode(err, unsentCodes)) {
      this.failed(addr);
      return "unsent";
    }
    if (signal?.aborted || ce?.code === Code.DeadlineExceeded || (ce && !transportCodes.has(ce.code))) {
      return "answered";
    }
    this.failed(addr);
    return "unanswered";
  }
}

/** RoutedTransport sends each call to the router's target over a
 * connection of that address. A call refused by a member that names the
 * leader goes to the leader; a call that reached no member goes to the
 * next address; a call sent but not answered goes to the next address
 * only when repeating it applies nothing twice (a call that changes
 * nothing, or one with a request id). It waits a capped, jittered backoff
 * between attempts, ends with the call's signal, and gives up after three
 * passes over the list with an Unavailable error naming the addresses
 * tried. A stream goes to the target and is not opened again here; how it
 * ended moves the router for the next one. */
export class RoutedTransport implements Transport {
  readonly router: Router;
  readonly #scheme: string;
  readonly #conn: Connection;
  readonly #interceptors: Interceptor[];
  readonly #byAddr = new Map<string, { transport: Transport; manager: Http2SessionManager }>();

  constructor(conn: Connection, interceptors: Interceptor[]) {
    this.router = new Router(conn.baseUrls);
    this.#scheme = conn.baseUrl.slice(0, conn.baseUrl.indexOf("://"));
    this.#conn = conn;
    this.#interceptors = interceptors;
  }

  async unary<I extends DescMessage, O extends DescMessage>(
    method: DescMethodUnary<I, O>,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
    header: HeadersInit | undefined,
    input: MessageInitShape<I>,
    contextValues?: ContextValues,
  ): Promise<UnaryResponse<I, O>> {
    const again = replayable.has(method.name) || carriesRequestId(input);
    const tried: string[] = [];
    for (let attempt = 0; ; attempt++) {
      const addr = this.router.target();
      tried.push(addr);
      try {
        return await this.#at(addr).unary(method, signal, timeoutMs, header, input, contextValues);
      } catch (e) {
        const o = this.router.after(addr, e, signal);
        if (o === "answered" || (o === "unanswered" && !again)) {
          throw e;
        }
        if (attempt + 1 >= roundsPerCall * this.router.addrs.length) {
          throw gaveUp(tried, e);
        }
        if (o !== "redirected" || attempt > 0) {
          await sleep(jitter(attempt, backoffBaseMs, backoffMaxMs), signal).catch(() => {
            throw gaveUp(tried, e);
          });
        }
      }
    }
  }

  async stream<I extends DescMessage, O extends DescMessage>(
    method: DescMethodStreaming<I, O>,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
    header: HeadersInit | undefined,
    input: AsyncIterable<MessageInitShape<I>>,
    contextValues?: ContextValues,
  ): Promise<StreamResponse<I, O>> {
    const addr = this.router.target();
    let res: StreamResponse<I, O>;
    try {
      res = await this.#at(addr).stream(method, signal, timeoutMs, header, input, contextValues);
    } catch (e) {
      this.router.after(addr, e, signal);
      throw e;
    }
    const router = this.router;
    const messages = res.message;
    async function* watched(): AsyncGenerator<MessageShape<O>> {
      try {
        yield* messages;
      } catch (e) {
        router.after(addr, e, signal);
        throw e;
      }
    }
    return { ...res, message: watched() };
  }

  /** close closes the connection of every address. */
  close(why?: Error): void {
    for (const { manager } of this.#byAddr.values()) {
      manager.abort(why);
    }
  }

  /** #at is the transport of addr, on a connection of its own. */
  #at(addr: string): Transport {
    let t = this.#byAddr.get(addr);
    if (!t) {
      t = connection(`${this.#scheme}://${addr}`, this.#conn.ca, this.#interceptors);
      this.#byAddr.set(addr, t);
    }
    return t.transport;
  }
}

/** connection is a transport to baseUrl over an HTTP/2 connection of its
 * own, and the manager that closes that connection. */
export function connection(baseUrl: string, ca: Buffer | undefined, interceptors: Interceptor[]): { transport: Transport; manager: Http2SessionManager } {
  const manager = new Http2SessionManager(baseUrl, {}, ca ? { ca } : {});
  const transport = createConnectTransport({ baseUrl, httpVersion: "2", useBinaryFormat: true, sessionManager: manager, interceptors });
  return { transport, manager };
}

/** isHostPort says whether s is host:port with a port from 1 to 65535. */
function isHostPort(s: string): boolean {
  const m = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(s);
  return m !== null && Number(m[2]) >= 1 && Number(m[2]) <= 65535;
}

/** systemCode says whether err, or an error it was caused by, is a system
 * error with one of codes. */
function systemCode(err: unknown, codes: Set<string>): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === "string" && codes.has(code)) {
      return true;
    }
  }
  return false;
}

/** carriesRequestId says whether a request has a request id, which
 * governord applies at most once. */
function carriesRequestId(input: unknown): boolean {
  const id = (input as { requestId?: unknown } | null)?.requestId;
  return typeof id === "string" && id !== "";
}

/** gaveUp is the error of a call no address answered. */
function gaveUp(tried: string[], last: unknown): ConnectError {
  const addrs = [...new Set(tried)].join(", ");
  const why = last instanceof Error ? last.message : String(last);
  return new ConnectError(
    `no governord answered as the leader after ${tried.length} attempts at ${addrs}; check that the nodes run and that GOVERNOR_ADDR lists their API addresses: ${why}`,
    Code.Unavailable,
    undefined,
    undefined,
    last,
  );
}
