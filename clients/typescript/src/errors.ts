// The client's errors: one class per way a call can fail, so callers test
// with instanceof. A call that governord refuses, or that does not reach it,
// fails with exactly one of them.

import { Code, ConnectError } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { DenialSchema, LeaseEndedSchema, type Denial } from "./gen/governor/v1/governor_pb.js";
import { durationMs } from "./wire.js";

/** GovernorError is the base of every error the client throws. */
export class GovernorError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** SessionLostError: the session ended on governord, or no heartbeat
 * succeeded within 80% of its TTL. Every task of the session is over; a new
 * task opens a new session. */
export class SessionLostError extends GovernorError {}

/** TaskEndedError: the task was closed, cancelled, or passed its deadline. */
export class TaskEndedError extends GovernorError {}

/** LeaseLostError: the lease expired, was revoked with its node, or is not
 * the caller's. */
export class LeaseLostError extends GovernorError {}

/** ForbiddenError: the node lies outside the key's scope. */
export class ForbiddenError extends GovernorError {}

/** NotFoundError: the node does not exist (any more). */
export class NotFoundError extends GovernorError {}

/** InvalidArgumentError: an argument or a setting was refused; the message
 * names it and what it allows. */
export class InvalidArgumentError extends GovernorError {}

/** BadKeyError: governord does not know the API key. */
export class BadKeyError extends GovernorError {}

/** UnavailableError: governord could not be reached or could not answer.
 * Nothing was allowed; retry later. */
export class UnavailableError extends GovernorError {}

/** NoTaskError: the call runs outside every task; start one with
 * client.task(spec, fn). */
export class NoTaskError extends GovernorError {
  constructor(what: string) {
    super(`governor: ${what} runs outside every task; call it inside client.task(spec, fn)`);
  }
}

/** ClosedError: the client was closed. */
export class ClosedError extends GovernorError {}

/** Consumer is a node and what it used of a resource. */
export interface Consumer {
  nodeId: bigint;
  name: string;
  used: bigint;
}

/** DeniedError is a refused consume or wait: the whole denial governord
 * sent, naming the cap that was hit and who spent it, or, for a rate cap,
 * when it would have room. */
export class DeniedError extends GovernorError {
  /** The node whose cap was hit: the task itself or an ancestor. */
  readonly nodeId: bigint;
  readonly nodeName: string;
  /** The resource (or concurrency class) refused. */
  readonly resource: string;
  /** The node's usage; not reported for a rate cap. */
  readonly used: bigint;
  /** The node's cap: a quota, or a rate cap's limit per period. */
  readonly limit: bigint;
  /** What the refused call asked for. */
  readonly requested: bigint;
  /** The child of the node that used the most; undefined when none has. */
  readonly largest: Consumer | undefined;
  /** True when a rate cap refused; false for a quota. */
  readonly rate: boolean;
  /** What the rate cap that refused admits now. */
  readonly remaining: bigint;
  /** The wait that would have been needed, in milliseconds; 0 when no wait
   * helps. */
  readonly retryAfterMs: number;
  /** When the rate cap would admit the amount; undefined for a quota. */
  readonly reset: Date | undefined;
  /** No wait helps: set only on a refused wait(). */
  readonly neverFits: boolean;
  /** The denial as governord sent it. */
  readonly denial: Denial;

  constructor(d: Denial, message: string, options?: ErrorOptions) {
    super(message, options);
    this.nodeId = d.nodeId;
    this.nodeName = d.nodeName;
    this.resource = d.resource;
    this.used = d.used;
    this.limit = d.limit;
    this.requested = d.requested;
    const c = d.largestConsumer;
    this.largest = c ? { nodeId: c.nodeId, name: c.name, used: c.used } : undefined;
    this.rate = d.rate !== undefined;
    this.remaining = d.remaining;
    this.retryAfterMs = d.retryAfter ? durationMs(d.retryAfter) : 0;
    this.reset = d.resetTime ? timestampDate(d.resetTime) : undefined;
    this.neverFits = d.neverFits;
    this.denial = d;
  }
}

/** RetryBudgetError is the last error of a retry() whose "retry" budget is
 * spent: enclosing retry() loops throw it at once. `cause` is the last
 * error of the function; `why` is the refusal of the budget. */
export class RetryBudgetError extends GovernorError {
  constructor(
    readonly last: unknown,
    readonly why: unknown,
  ) {
    super(`${messageOf(last)} (not retried: ${messageOf(why)})`, { cause: last });
  }
}

/** OverloadedError, thrown by withLease's function (or given as its
 * cause), reports the downstream as overloaded when the lease is released. */
export class OverloadedError extends GovernorError {}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

// kinds maps the status codes that need no detail to their class.
const kinds = new Map<Code, new (message: string, options?: ErrorOptions) => GovernorError>([
  [Code.NotFound, NotFoundError],
  [Code.PermissionDenied, ForbiddenError],
  [Code.InvalidArgument, InvalidArgumentError],
  [Code.Unauthenticated, SessionLostError],
  [Code.FailedPrecondition, TaskEndedError],
]);

/** fromApi turns the failure of a call to governord into the client's
 * error. A call cut short by its signal throws the signal's reason, so that
 * a task that ended says so. */
export function fromApi(what: string, err: unknown, signal?: AbortSignal): unknown {
  if (signal?.aborted) {
    return signal.reason;
  }
  if (err instanceof GovernorError) {
    return err;
  }
  const ce = ConnectError.from(err);
  const [denial] = ce.findDetails(DenialSchema);
  if (denial || ce.code === Code.ResourceExhausted) {
    return new DeniedError(denial ?? create(DenialSchema), ce.rawMessage, { cause: err });
  }
  if (ce.findDetails(LeaseEndedSchema).length > 0) {
    return new LeaseLostError(ce.rawMessage, { cause: err });
  }
  const kind = kinds.get(ce.code);
  if (kind) {
    return new kind(ce.rawMessage, { cause: err });
  }
  return new UnavailableError(
    `governor: ${what}: governord did not answer (${ce.rawMessage}); nothing was allowed, retry later`,
    { cause: err },
  );
}

/** taskEnded is the reason of a task's signal when the task ended. */
export function taskEnded(name: string, id: bigint, reason: string): TaskEndedError {
  return new TaskEndedError(`governor: task "${name}" (node ${id}) ended: ${reason}`);
}
