// The session fails closed: signals fire before governord's TTL when
// heartbeats stop, and a lost session reopens for new tasks.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { performance } from "node:perf_hooks";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { ClosedError, SessionLostError, TaskEndedError, acquire, consume, dial, signal } from "../src/index.js";
import { Admin, Governord, Proxy, aborted, teamKey, limit } from "./harness.js";

describe("session", () => {
  let g: Governord;
  let admin: Admin;
  before(async () => {
    g = await Governord.start();
    admin = new Admin(g.addr);
  });
  after(() => g.stop());

  it("a paused worker's signals all fire before governord's TTL ends its session", limit, async () => {
    const proxy = await Proxy.start(g.addr);
    const ttlMs = 1500;
    const client = await dial({ addr: proxy.addr, apiKey: teamKey, ttlMs });
    try {
      await client.task({ name: "paused", limits: { db: 1 } }, async (outer) => {
        const lease = await acquire("db");
        await client.task({ name: "paused-sub" }, async (inner) => {
          proxy.pause();
          const paused = performance.now();
          const reasons = await Promise.all([aborted(outer.signal, ttlMs), aborted(inner.signal, ttlMs)]);
          const firedAfter = performance.now() - paused;
          for (const r of reasons) {
            assert.ok(r instanceof SessionLostError, `signal fired with ${r}, want a SessionLostError`);
          }
          // governord has not ended the session yet: the lease it holds is
          // still valid, so the worker stopped before governord gave it up.
          assert.equal(await admin.leaseValid(lease.id), true, `lease ended before the signals fired (${firedAfter}ms after the pause)`);
          await assert.rejects(consume("http", 1), SessionLostError);
        });
      }).catch((e) => assert.ok(e instanceof SessionLostError, `task ended with ${e}`));
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it("a worker whose event loop was blocked past the fail point refuses to act", limit, async () => {
    const client = await dial({ addr: g.addr, apiKey: teamKey, ttlMs: 1000 });
    try {
      let node = 0n;
      const err = await client
        .task({ name: "blocked" }, async (t) => {
          node = t.id;
          const until = performance.now() + 850;
          while (performance.now() < until) {
            // the event loop is blocked: no timer or heartbeat runs
          }
          // No timer has run yet, and the client already knows.
          assert.ok(client.err instanceof SessionLostError, `client.err right after the block: ${client.err}`);
          assert.ok(t.signal.aborted, "the task's signal has not fired right after the block");
          await consume("http", 1);
        })
        .catch((e) => e);
      assert.ok(err instanceof SessionLostError, `consume after a blocked loop: ${err}, want a SessionLostError`);
      assert.equal(await admin.used(node, "http"), 0n, "the consume reached governord after the session was given up");
    } finally {
      await client.close();
    }
  });

  it("a lost session reopens by itself for new tasks", limit, async () => {
    const proxy = await Proxy.start(g.addr);
    const client = await dial({ addr: proxy.addr, apiKey: teamKey, ttlMs: 600 });
    try {
      const first = client.sessionId;
      proxy.pause();
      await new Promise((r) => setTimeout(r, 600));
      assert.ok(client.err instanceof SessionLostError, `client.err = ${client.err}, want a SessionLostError`);
      proxy.resume();
      await client.task({ name: "reopened" }, async () => {
        await consume("http", 1);
      });
      assert.notEqual(client.sessionId, first, "no new session was opened");
      assert.equal(client.err, undefined);
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it("governord killed: signals fire within the TTL; restarted: new tasks open a new session", limit, async () => {
    const ttlMs = 1000;
    const client = await dial({ addr: g.addr, apiKey: teamKey, ttlMs });
    try {
      const before = client.sessionId;
      let nodeId = 0n;
      await client
        .task({ name: "killed", quotas: { http: 10 } }, async (t) => {
          nodeId = t.id;
          await consume("http", 2);
          await g.kill();
          const reason = await aborted(signal(), ttlMs);
          assert.ok(reason instanceof SessionLostError, `signal fired with ${reason}, want a SessionLostError`);
          await assert.rejects(client.task({ name: "late-sub" }, async () => undefined), SessionLostError);
        })
        .catch((e) => assert.ok(e instanceof SessionLostError, `task ended with ${e}`));
      await g.restart();
      await client.task({ name: "after-restart", quotas: { http: 10 } }, async () => {
        const b = await consume("http", 3);
        assert.equal(b.remaining, 7n);
      });
      assert.notEqual(client.sessionId, before, "the session was not reopened");
      assert.equal(await new Admin(g.addr).used(nodeId, "http"), 2n, "the charge made before the kill is lost");
    } finally {
      await client.close();
    }
  });

  it("a session and its lease survive a restart within the TTL, and tasks from before it are still followed", limit, async () => {
    const client = await dial({ addr: g.addr, apiKey: teamKey, ttlMs: 2000 });
    try {
      await client
        .task({ name: "survivor", quotas: { http: 10 }, limits: { db: 1 } }, async (t) => {
          const lease = await acquire("db");
          await consume("http", 1);
          await g.restart();
          await lease.validate();
          assert.equal((await consume("http", 1)).remaining, 8n);
          await new Promise((r) => setTimeout(r, 3000)); // heartbeats carry the session past its TTL
          assert.equal(t.signal.aborted, false, `the task ended: ${t.signal.reason}`);
          await lease.release();
          // The watch stream no longer follows a task created before the
          // restart; the client asks about it with each heartbeat instead.
          await new Admin(g.addr).cancel(t.id);
          const r = await aborted(t.signal, 2000);
          assert.ok(r instanceof TaskEndedError, `signal fired with ${r}`);
        })
        .catch((e) => assert.ok(e instanceof TaskEndedError, `${e}`));
    } finally {
      await client.close();
    }
  });

  it("an operator's cancel fires the task's signal and its subtasks'", limit, async () => {
    const client = await dial({ addr: g.addr, apiKey: teamKey });
    try {
      const err = await client
        .task({ name: "operator" }, async (outer) => {
          await client.task({ name: "operator-sub" }, async (inner) => {
            await admin.cancel(outer.id);
            for (const s of [outer.signal, inner.signal]) {
              const r = await aborted(s, 5000);
              assert.ok(r instanceof TaskEndedError, `signal fired with ${r}, want a TaskEndedError`);
            }
            await consume("http", 1);
          });
        })
        .catch((e) => e);
      assert.ok(err instanceof TaskEndedError, `consume in a cancelled task: ${err}`);
    } finally {
      await client.close();
    }
  });

  it("cancelling a task fires its signal and its subtasks' at once", limit, async () => {
    // No watch stream: the signals fire from the cancel itself, not from
    // governord's report of it.
    const noWatch: Interceptor = (next) => async (req) => {
      if (req.method.name === "WatchNode") {
        throw new ConnectError("no watch stream in this test", Code.Unavailable);
      }
      return next(req);
    };
    const client = await dial({ addr: g.addr, apiKey: teamKey, interceptors: [noWatch] });
    try {
      await client.task({ name: "cancelled" }, async (outer) => {
        await client.task({ name: "cancelled-sub" }, async (inner) => {
          await outer.cancel("enough");
          for (const s of [outer.signal, inner.signal]) {
            assert.ok(s.aborted && s.reason instanceof TaskEndedError, `signal after cancel: aborted ${s.aborted}, reason ${s.reason}`);
          }
        });
      }).catch((e) => assert.ok(e instanceof TaskEndedError, `${e}`));
    } finally {
      await client.close();
    }
  });

  it("a deadline fires the signal", limit, async () => {
    const client = await dial({ addr: g.addr, apiKey: teamKey });
    try {
      await client.task({ name: "deadline", deadline: new Date(Date.now() + 200) }, async (t) => {
        const r = await aborted(t.signal, 5000);
        assert.ok(r instanceof TaskEndedError, `signal fired with ${r}`);
      });
    } finally {
      await client.close();
    }
  });

  it("close fires every signal and refuses new work", limit, async () => {
    const client = await dial({ addr: g.addr, apiKey: teamKey });
    await client.task({ name: "closing" }, async (t) => {
      await client.close();
      assert.ok(t.signal.reason instanceof ClosedError, `signal reason ${t.signal.reason}`);
    }).catch((e) => assert.ok(e instanceof ClosedError, `${e}`));
    await assert.rejects(client.task({ name: "after-close" }, async () => undefined), ClosedError);
  });
});
