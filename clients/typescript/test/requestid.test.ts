// A call that changes state is re-sent with the same request id after a
// lost reply, and governord applies it once.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { acquire, consume, dial, type Client } from "../src/index.js";
import { Admin, Governord, teamKey, limit } from "./harness.js";

/** LostReplies lets the named calls reach governord, then drops the first
 * reply of each, as a connection cut after the request was applied would;
 * it records the request id of every call it passes. */
class LostReplies {
  readonly ids = new Map<string, string[]>();
  readonly #dropped = new Set<string>();
  constructor(readonly methods: string[]) {}

  readonly interceptor: Interceptor = (next) => async (req) => {
    const name = req.method.name;
    const res = await next(req);
    if (this.methods.includes(name)) {
      const msg = req.message as { requestId?: string };
      this.ids.set(name, [...(this.ids.get(name) ?? []), msg.requestId ?? ""]);
      if (!this.#dropped.has(name)) {
        this.#dropped.add(name);
        throw new ConnectError("the reply was lost on the way back", Code.Unavailable);
      }
    }
    return res;
  };
}

describe("request ids", () => {
  let g: Governord;
  let admin: Admin;
  let client: Client;
  let lost: LostReplies;
  before(async () => {
    g = await Governord.start();
    admin = new Admin(g.addr);
    lost = new LostReplies(["CreateNode", "Consume", "Acquire"]);
    client = await dial({ addr: g.addr, apiKey: teamKey, interceptors: [lost.interceptor] });
  });
  after(async () => {
    await client.close();
    await g.stop();
  });

  it("a lost reply is re-sent with the same id and applied once", limit, async () => {
    let tenant = 0n;
    await client.task({ name: "lost-replies", quotas: { http: 10 }, limits: { db: 5 } }, async (t) => {
      tenant = await admin.parent(t.id);
      const b = await consume("http", 3);
      assert.equal(b.remaining, 7n, "the consume was charged twice");
      assert.equal(await admin.used(t.id, "http"), 3n);
      const lease = await acquire("db");
      assert.equal(await admin.held(t.id, "db"), 1n, "the acquire was granted twice");
      await lease.release();
    });
    const made = (await admin.children(tenant)).filter((n) => n === "lost-replies");
    assert.equal(made.length, 1, "a lost CreateNode reply made a second task");
    for (const m of lost.methods) {
      const ids = lost.ids.get(m) ?? [];
      assert.equal(ids.length, 2, `${m} was sent ${ids.length} times, want twice`);
      assert.ok(ids[0] !== "" && ids[0] === ids[1], `${m} was re-sent with request id ${ids[1]}, first ${ids[0]}`);
    }
  });
});
