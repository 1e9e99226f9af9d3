// Work inside tasks: the retry budget across nested loops, fan-out under
// a lease, denials, scheduled admission and the isolation of tasks.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  DeniedError,
  LeaseLostError,
  NoTaskError,
  RetryBudgetError,
  acquire,
  consume,
  currentTask,
  dial,
  retry,
  task,
  wait,
  withLease,
  type Client,
} from "../src/index.js";
import { Admin, Governord, otherKey, teamKey, limit } from "./harness.js";

describe("work in tasks", () => {
  let g: Governord;
  let admin: Admin;
  let client: Client;
  before(async () => {
    g = await Governord.start();
    admin = new Admin(g.addr);
    client = await dial({ addr: g.addr, apiKey: teamKey });
  });
  after(async () => {
    await client.close();
    await g.stop();
  });

  it("nested retry loops share one budget and stop together when it is spent", limit, async () => {
    await client.task({ name: "retries", quotas: { retry: 3 } }, async (t) => {
      let outer = 0;
      let inner = 0;
      const err = await retry(
        async () => {
          outer++;
          await retry(
            async () => {
              inner++;
              throw new Error("flaky downstream");
            },
            { attempts: 10, baseMs: 1, maxMs: 2 },
          );
        },
        { attempts: 10, baseMs: 1, maxMs: 2 },
      ).catch((e) => e);
      assert.ok(err instanceof RetryBudgetError, `retry ended with ${err}, want a RetryBudgetError`);
      assert.ok(err.why instanceof DeniedError, `the budget's refusal is ${err.why}`);
      assert.equal((err.last as Error).message, "flaky downstream");
      assert.equal(outer, 1, "the outer loop retried after the budget was spent");
      assert.equal(inner, 4, "the inner loop made other than one attempt per unit of budget, plus the free one");
      assert.equal(await admin.used(t.id, "retry"), 3n);
    });
  });

  it("fan-out under a lease is as wide as the limit and no wider", limit, async () => {
    await client.task({ name: "fan-out", limits: { agents: 2 } }, async () => {
      let running = 0;
      let widest = 0;
      const ids: bigint[] = [];
      await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          task({ name: `agent-${i}` }, () =>
            withLease("agents", async (lease) => {
              ids.push(lease.id);
              running++;
              widest = Math.max(widest, running);
              await new Promise((r) => setTimeout(r, 30));
              await lease.validate();
              running--;
            }),
          ),
        ),
      );
      assert.equal(widest, 2, `${widest} agents ran at once under a limit of 2`);
      assert.equal(new Set(ids).size, 6, "a fencing id was handed out twice");
    });
  });

  it("a released lease no longer validates", limit, async () => {
    await client.task({ name: "validate", limits: { db: 1 } }, async () => {
      const lease = await acquire("db", { maxHoldMs: 60_000 });
      assert.ok(lease.holdUntil instanceof Date);
      await lease.validate();
      await lease.release();
      await assert.rejects(lease.validate(), LeaseLostError);
    });
  });

  it("a denial carries the whole denial and charges nothing", limit, async () => {
    await client.task({ name: "denied", quotas: { tokens: 5 } }, async (t) => {
      await task({ name: "spender" }, () => consume("tokens", 4));
      const err = await consume("tokens", 2).catch((e) => e);
      assert.ok(err instanceof DeniedError, `consume over the quota: ${err}`);
      assert.deepEqual(
        [err.nodeId, err.nodeName, err.resource, err.used, err.limit, err.requested, err.rate],
        [t.id, "denied", "tokens", 4n, 5n, 2n, false],
      );
      assert.equal(err.largest?.name, "spender");
      assert.equal(err.denial.nodeName, "denied");
      assert.equal(err.largest?.used, 4n);
      assert.equal(await admin.used(t.id, "tokens"), 4n);
    });
  });

  it("wait books a slot on a rate cap and sleeps until it", limit, async () => {
    const rates = { api: { limit: 10, periodMs: 1000, burst: 1, algorithm: "leaky" as const } };
    await client.task({ name: "scheduled", rates }, async () => {
      assert.equal((await consume("api", 1)).status, "admitted");
      await assert.rejects(consume("api", 1), DeniedError);
      const start = performance.now();
      const b = await wait("api", 1, { timeoutMs: 5000 });
      assert.equal(b.status, "scheduled");
      assert.ok(b.retryAfterMs > 0 && performance.now() - start >= b.retryAfterMs - 1, `woke before the slot: ${JSON.stringify(b.retryAfterMs)}`);
      const never = await wait("api", 2).catch((e) => e);
      assert.ok(never instanceof DeniedError && never.neverFits, `wait for more than the burst: ${never}`);
    });
  });

  it("concurrent tasks each charge their own node", limit, async () => {
    const nodes: bigint[] = [];
    await Promise.all(
      [0, 1, 2].map((i) =>
        client.task({ name: `flow-${i}` }, async (t) => {
          nodes[i] = t.id;
          for (let k = 0; k <= i; k++) {
            await new Promise((r) => setTimeout(r, Math.random() * 10));
            assert.equal(currentTask(), t, "an async flow saw another flow's task");
            await consume("items", 1);
          }
        }),
      ),
    );
    for (const [i, n] of nodes.entries()) {
      assert.equal(await admin.used(n, "items"), BigInt(i + 1));
    }
  });

  it("outside every task nothing is charged, and a key's tasks stay in its tenant", limit, async () => {
    await assert.rejects(consume("http", 1), NoTaskError);
    await assert.rejects(acquire("db"), NoTaskError);
    let calls = 0;
    const err = await retry(() => {
      calls++;
      throw new Error("down");
    }).catch((e) => e);
    assert.ok(err instanceof RetryBudgetError && err.why instanceof NoTaskError, `retry outside a task: ${err}`);
    assert.equal(calls, 1);
    await assert.rejects(task({ name: "orphan" }, async () => undefined), NoTaskError);
    const other = await dial({ addr: g.addr, apiKey: otherKey });
    try {
      await client.task({ name: "team-a-task" }, async (a) => {
        // A task of another client started inside this one is that
        // client's top-level task, in that client's tenant.
        await other.task({ name: "team-b-task" }, async (b) => {
          assert.notEqual(await admin.parent(b.id), a.id);
          assert.notEqual(await admin.parent(b.id), await admin.parent(a.id));
          await consume("http", 1);
          assert.equal(await admin.used(b.id, "http"), 1n);
        });
        assert.equal(await admin.used(a.id, "http"), 0n);
      });
    } finally {
      await other.close();
    }
  });
});
