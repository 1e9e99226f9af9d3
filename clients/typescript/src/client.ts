// The client: dial, the current session (reopened when lost), and tasks.

import type { Interceptor } from "@connectrpc/connect";
import { resolve, type ConnectionOptions } from "./config.js";
import { ClosedError, InvalidArgumentError, SessionLostError, fromApi, taskEnded } from "./errors.js";
import { RequestIds } from "./ids.js";
import { send } from "./send.js";
import { Session, type SessionSettings } from "./session.js";
import { Task, storage, wireSpec, type Spec } from "./task.js";

/** What dial connects with; every field is optional. */
export interface DialOptions extends ConnectionOptions {
  /** The session TTL to ask for, in milliseconds; governord refuses one
   * outside its configured range. Unset: governord's default. */
  ttlMs?: number;
  /** Names the client in governord's log. */
  clientName?: string;
  /** How long a call that changes state is re-sent, with the same request
   * id, while governord does not answer, in milliseconds (default 2000).
   * Closing a task and releasing a lease are re-sent for a session TTL. */
  resendMs?: number;
  /** Connect interceptors every call goes through, after the client's. */
  interceptors?: Interceptor[];
}

/** The default of DialOptions.resendMs. */
export const defaultResendMs = 2000;

/** dial opens a session with governord and starts its heartbeats and its
 * watch stream. It reads GOVERNOR_ADDR (one address, or a cluster's
 * members separated by commas), GOVERNOR_API_KEY, GOVERNOR_TLS and
 * GOVERNOR_CA_FILE; options override them. An unreachable governord is an
 * UnavailableError and an unknown key a BadKeyError. */
export async function dial(opts: DialOptions = {}): Promise<Client> {
  const resendMs = opts.resendMs ?? defaultResendMs;
  if (!Number.isFinite(resendMs) || resendMs < 0) {
    throw new InvalidArgumentError(`governor: resendMs must be a finite number of milliseconds, at least 0, got ${resendMs}`);
  }
  if (opts.ttlMs !== undefined && !(opts.ttlMs > 0)) {
    throw new InvalidArgumentError(`governor: ttlMs must be positive, got ${opts.ttlMs}; leave it out for governord's default`);
  }
  const settings: SessionSettings = {
    conn: resolve(opts),
    ttlMs: opts.ttlMs,
    clientName: opts.clientName ?? "",
    interceptors: opts.interceptors ?? [],
  };
  return new Client(settings, await Session.open(settings), resendMs);
}

/** Client is a session with governord that heartbeats itself, follows
 * its tasks on one watch stream and fires their signals when they end.
 * When the session is lost every task of it is over, and the next
 * top-level task opens a new session. Create it with dial and end it with
 * close(). */
export class Client {
  /** Request ids of the calls that change state. */
  readonly ids = new RequestIds();
  /** How long calls that change state are re-sent, in milliseconds. */
  readonly resendMs: number;
  readonly #settings: SessionSettings;
  #session: Session;
  #opening: Promise<Session> | undefined;
  #closed: ClosedError | undefined;

  constructor(settings: SessionSettings, session: Session, resendMs: number) {
    this.#settings = settings;
    this.#session = session;
    this.resendMs = resendMs;
  }

  /** The id of the current session. */
  get sessionId(): bigint {
    return this.#session.id;
  }

  /** The TTL governord granted the current session, in milliseconds. */
  get ttlMs(): number {
    return this.#session.ttlMs;
  }

  /** err is undefined while the current session is live, and otherwise
   * says why it is not: a SessionLostError (the next task opens a new
   * session) or a ClosedError. */
  get err(): unknown {
    if (this.#closed) {
      return this.#closed;
    }
    try {
      this.#session.check();
      return undefined;
    } catch (e) {
      return e;
    }
  }

  /** task creates a task and runs fn in it: inside fn, and everything fn
   * calls, consume, acquire, retry, wait and the governed fetch charge this
   * task, and task() makes subtasks of it. When fn returns, the task is
   * closed as done; when fn throws, it is cancelled with the error's
   * message (and fn's error is thrown); either way its signal fires. Outside every task of this
   * client, the task is a child of the key's scope (its tenant). */
  async task<T>(spec: Spec, fn: (task: Task) => Promise<T> | T): Promise<T> {
    const t = await this.#create(spec);
    let out: T;
    try {
      out = await storage.run(t, () => fn(t));
    } catch (e) {
      // fn's error comes first; a cancel governord does not take leaves the
      // task to end with the session.
      await t.cancel(e instanceof Error ? e.message : String(e)).catch(() => undefined);
      throw e;
    }
    await t.close();
    return out;
  }

  async #create(spec: Spec): Promise<Task> {
    const node = wireSpec(spec);
    const inside = storage.getStore();
    const parent = inside?.client === this ? inside : undefined;
    parent?.check();
    const s = parent ? parent.session : await this.#live();
    const requestId = this.ids.next();
    s.pending++;
    try {
      const res = await send(s, "create task", parent?.signal, this.resendMs, (opts) =>
        s.api.createNode({ parentId: parent?.id ?? 0n, spec: node, requestId }, opts),
      );
      const id = res.node!.id;
      const t = new Task(this, s, id, spec.name, parent, spec.deadline);
      const early = s.early.get(id);
      if (s.ended !== undefined) {
        t.end(s.ended);
      } else if (early !== undefined) {
        t.end(taskEnded(spec.name, id, early));
      } else {
        s.tasks.set(id, t);
      }
      t.check();
      return t;
    } finally {
      if (--s.pending === 0) {
        s.early.clear();
      }
    }
  }

  /** #live returns the current session, opening a new one when it has been
   * lost. */
  async #live(): Promise<Session> {
    if (this.#closed) {
      throw this.#closed;
    }
    try {
      this.#session.check();
      return this.#session;
    } catch (e) {
      if (!(e instanceof SessionLostError)) {
        throw e;
      }
    }
    this.#opening ??= Session.open(this.#settings).finally(() => (this.#opening = undefined));
    const s = await this.#opening;
    if (this.#closed) {
      s.lose(this.#closed);
      throw this.#closed;
    }
    this.#session = s;
    return s;
  }

  /** close fires the signal of every task of the client, stops its
   * heartbeats and its watch stream, and closes the session on governord,
   * which releases its leases. It does not end the tasks on governord:
   * task() does that. Calls afterwards throw a ClosedError. */
  async close(): Promise<void> {
    if (this.#closed) {
      return;
    }
    this.#closed = new ClosedError("governor: the client was closed");
    const s = this.#session;
    if (s.ended !== undefined) {
      return;
    }
    const tasks = [...s.tasks.values()];
    for (const t of tasks) {
      t.end(this.#closed);
    }
    try {
      await send(s, "close session", AbortSignal.timeout(Math.ceil(s.ttlMs)), s.ttlMs, (opts) => s.api.closeSession({}, opts));
    } catch (e) {
      if (!(fromApi("close session", e) instanceof SessionLostError)) {
        throw e;
      }
    } finally {
      s.lose(this.#closed);
    }
  }
}
