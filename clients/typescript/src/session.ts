// A session with governord: heartbeated three times per TTL, and given up
// (failing closed) at 80% of the TTL after the send of the last heartbeat
// that succeeded, before governord ends it.

import { performance } from "node:perf_hooks";
import { create } from "@bufbuild/protobuf";
import { createClient, type Client as ServiceClient, type Interceptor } from "@connectrpc/connect";
import { GovernorService, OpenSessionRequestSchema } from "./gen/governor/v1/governor_pb.js";
import type { Connection } from "./config.js";
import { BadKeyError, SessionLostError, fromApi } from "./errors.js";
import { sleep } from "./timing.js";
import { RoutedTransport, connection } from "./route.js";
import { durationMs, duration } from "./wire.js";
import type { Task } from "./task.js";
import { checkUnwatched, watchLoop } from "./watch.js";

/** The API of governord as the generated Connect client sees it. */
export type API = ServiceClient<typeof GovernorService>;

/** The part of the TTL after which, without a heartbeat that succeeded,
 * the client gives its session up: before governord ends it. */
const failShare = 0.8;

/** What a session is opened with. */
export interface SessionSettings {
  conn: Connection;
  ttlMs: number | undefined;
  clientName: string;
  interceptors: Interceptor[];
}

/** transport returns a client of governord's API on a connection of its
 * own (with several addresses, one per member, following the leader:
 * RoutedTransport), and how to close it. */
function transport(s: SessionSettings): { api: API; manager: { abort(why?: Error): void } } {
  if (s.conn.baseUrls.length > 1) {
    const routed = new RoutedTransport(s.conn, s.interceptors);
    return { api: createClient(GovernorService, routed), manager: { abort: (why) => routed.close(why) } };
  }
  const { transport: t, manager } = connection(s.conn.baseUrl, s.conn.ca, s.interceptors);
  return { api: createClient(GovernorService, t), manager };
}

/** Session is one session with governord and the tasks created in it.
 * Once it has ended it stays ended: the client opens another. Its
 * background work, started by open and stopped by lose: heartbeatLoop
 * (renews, then asks about tasks the stream does not report), watchLoop
 * (the watch stream, which ends tasks) and the watchdog timer (fails
 * closed). Each session has its own HTTP/2 connection, closed by lose. */
export class Session {
  readonly id: bigint;
  readonly ttlMs: number;
  readonly failAfterMs: number;
  /** The bearer token of every call in this session. */
  readonly headers: Record<string, string>;
  /** Tasks of the session still live, by node id. */
  readonly tasks = new Map<bigint, Task>();
  /** Ends heard for nodes whose creation has not returned yet, kept while
   * creations are pending. */
  readonly early = new Map<bigint, string>();
  pending = 0;
  /** Why the session ended; undefined while it is live. */
  ended: unknown;

  readonly api: API;
  readonly #manager: { abort(why?: Error): void };
  readonly #stop = new AbortController();
  #giveUp: number;
  #watchdog: NodeJS.Timeout | undefined;

  private constructor(api: API, manager: { abort(why?: Error): void }, id: bigint, token: string, ttlMs: number, sent: number) {
    this.api = api;
    this.#manager = manager;
    this.id = id;
    this.ttlMs = ttlMs;
    this.failAfterMs = ttlMs * failShare;
    this.headers = { authorization: `Bearer ${token}` };
    this.#giveUp = sent + this.failAfterMs;
    this.#arm();
    void heartbeatLoop(this);
    void watchLoop(this);
  }

  /** open opens a session with the API key and starts its heartbeats and
   * its watch stream. An unknown key is a BadKeyError. */
  static async open(s: SessionSettings, signal?: AbortSignal): Promise<Session> {
    const { api, manager } = transport(s);
    const req = create(OpenSessionRequestSchema, { clientName: s.clientName });
    if (s.ttlMs !== undefined) {
      req.ttl = duration("ttlMs", s.ttlMs);
    }
    const sent = performance.now();
    try {
      const res = await api.openSession(req, { signal, headers: { authorization: `Bearer ${s.conn.apiKey}` } });
      return new Session(api, manager, res.sessionId, res.token, durationMs(res.ttl!), sent);
    } catch (e) {
      manager.abort();
      const err = fromApi("open session", e, signal);
      throw err instanceof SessionLostError ? new BadKeyError((err as Error).message, { cause: e }) : err;
    }
  }

  /** The signal that stops the session's loops when it ends. */
  get stopped(): AbortSignal {
    return this.#stop.signal;
  }

  /** check throws why the session ended, and ends it first, failing
   * closed, when 80% of the TTL has passed since the send of the last
   * heartbeat that succeeded: even when the event loop was too busy for the
   * watchdog to fire. */
  check(): void {
    if (this.ended === undefined && performance.now() >= this.#giveUp) {
      this.#failClosed();
    }
    if (this.ended !== undefined) {
      throw this.ended;
    }
  }

  /** renewed records a heartbeat that succeeded, sent at sent. */
  renewed(sent: number): void {
    if (this.ended === undefined) {
      this.#giveUp = Math.max(this.#giveUp, sent + this.failAfterMs);
      this.#arm();
    }
  }

  /** The instant (performance.now) at which the session is given up. */
  get giveUp(): number {
    return this.#giveUp;
  }

  /** lose ends the session with why: every task's signal fires with it,
   * the loops stop and the connection closes. Later calls do nothing. */
  lose(why: unknown): void {
    if (this.ended !== undefined) {
      return;
    }
    this.ended = why;
    clearTimeout(this.#watchdog);
    for (const t of [...this.tasks.values()]) {
      t.end(why);
    }
    this.#stop.abort(why);
    this.#manager.abort(why instanceof Error ? why : undefined);
  }

  #arm(): void {
    clearTimeout(this.#watchdog);
    this.#watchdog = setTimeout(() => this.#failClosed(), Math.max(0, this.#giveUp - performance.now()));
    this.#watchdog.unref();
  }

  #failClosed(): void {
    this.lose(
      new SessionLostError(
        `governor: no heartbeat succeeded within ${this.failAfterMs}ms (80% of the session's TTL of ${this.ttlMs}ms); every task of the session is over`,
      ),
    );
  }
}

/** heartbeatLoop renews the session three times per TTL until it ends. A
 * heartbeat gives up at the instant the session would be given up anyway;
 * governord saying the session is gone ends it at once. */
async function heartbeatLoop(s: Session): Promise<void> {
  for (;;) {
    try {
      await sleep(s.ttlMs / 3, s.stopped, true);
    } catch {
      return;
    }
    const sent = performance.now();
    const signal = AbortSignal.any([s.stopped, AbortSignal.timeout(Math.max(1, Math.ceil(s.giveUp - sent)))]);
    try {
      await s.api.heartbeat({}, { signal, headers: s.headers });
      s.renewed(sent);
      await checkUnwatched(s, AbortSignal.any([s.stopped, AbortSignal.timeout(Math.max(1, Math.ceil(s.giveUp - performance.now())))]));
    } catch (e) {
      if (s.stopped.aborted) {
        return;
      }
      const err = fromApi("heartbeat", e);
      if (err instanceof SessionLostError) {
        s.lose(err);
        return;
      }
    }
  }
}
