// The watch stream: one WatchNode stream for every node the session
// created, so a task ended on governord (cancelled by an operator or an
// ancestor, past its deadline) fires its signal here too.

import { NodeState, type WatchNodeResponse } from "./gen/governor/v1/governor_pb.js";
import { NotFoundError, SessionLostError, fromApi, taskEnded } from "./errors.js";
import type { Session } from "./session.js";
import { pause } from "./timing.js";

/** watchLoop keeps the stream open until the session ends. A broken
 * stream is opened again; its first messages are the current states, so an
 * end missed while it was down is heard then. */
export async function watchLoop(s: Session): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    let heard = false;
    try {
      const stream = s.api.watchNode({ createdBySession: true }, { signal: s.stopped, headers: s.headers });
      for await (const m of stream) {
        heard = true;
        apply(s, m);
      }
    } catch (e) {
      if (s.stopped.aborted) {
        return;
      }
      const err = fromApi("watch tasks", e);
      if (err instanceof SessionLostError) {
        s.lose(err);
        return;
      }
    }
    if (heard) {
      attempt = 0;
    }
    try {
      await pause(attempt, s.stopped);
    } catch {
      return;
    }
    for (const t of s.tasks.values()) {
      t.watched = false;
    }
  }
}

/** checkUnwatched asks governord about the tasks the watch stream has not
 * reported since it was last opened: after governord restarts, the stream
 * no longer follows nodes created before the restart. It gives up when
 * signal fires, so that it never holds the heartbeats up. */
export async function checkUnwatched(s: Session, signal: AbortSignal): Promise<void> {
  for (const t of [...s.tasks.values()].filter((t) => !t.watched)) {
    try {
      const res = await s.api.getNode({ nodeId: t.id }, { signal, headers: s.headers });
      if (res.node && res.node.state !== NodeState.ACTIVE) {
        t.end(taskEnded(t.name, t.id, res.node.endedReason));
      }
    } catch (e) {
      const err = fromApi("describe task", e, signal);
      if (err instanceof NotFoundError) {
        t.end(taskEnded(t.name, t.id, "it is no longer known to governord"));
      } else if (signal.aborted) {
        return;
      }
    }
  }
}

/** apply notes that the stream follows a task, and ends the task of a
 * node that ended. */
function apply(s: Session, m: WatchNodeResponse): void {
  const t = s.tasks.get(m.nodeId);
  if (t) {
    t.watched = true;
  }
  if (m.state === NodeState.ACTIVE) {
    return;
  }
  if (t) {
    t.end(taskEnded(t.name, t.id, m.endedReason));
  } else if (s.pending > 0) {
    s.early.set(m.nodeId, m.endedReason);
  }
}
