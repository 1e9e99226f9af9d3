// The Node client of governord. Start with dial(), then run work in
// client.task(spec, fn): inside, consume, acquire, withLease, retry, wait
// and governedFetch charge the current task without a handle.

export { dial, Client, defaultResendMs, type DialOptions } from "./client.js";
export { defaultAddr, type ConnectionOptions } from "./config.js";
export {
  GovernorError,
  DeniedError,
  SessionLostError,
  TaskEndedError,
  LeaseLostError,
  ForbiddenError,
  NotFoundError,
  InvalidArgumentError,
  BadKeyError,
  UnavailableError,
  NoTaskError,
  ClosedError,
  RetryBudgetError,
  OverloadedError,
  type Consumer,
} from "./errors.js";
export { Task, currentTask, signal, task, type Spec, type Rate } from "./task.js";
export {
  consume,
  wait,
  defaultWaitMs,
  resourceHTTP,
  classHTTP,
  resourceRetry,
  classAgents,
  type Balance,
  type WaitOptions,
} from "./consume.js";
export { acquire, withLease, Lease, type LeaseOptions, type Report } from "./lease.js";
export { retry, retryable, type RetryOptions } from "./retry.js";
export { governedFetch, overloaded, defaultFetchHoldMs, type FetchOptions } from "./fetch.js";
