// With a list of a cluster's members, the client follows the leader: a
// member that does not lead names it, a dead member is passed over, and a
// call is sent again only when that applies nothing twice.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createClient } from "@connectrpc/connect";
import { Admin, Governord, Proxy, adminKey, limit, teamKey } from "./harness.js";
import { baseURLs, resolve } from "../src/config.js";
import { GovernorService } from "../src/gen/governor/v1/governor_pb.js";
import { RoutedTransport } from "../src/route.js";
import { InvalidArgumentError, consume, dial } from "../src/index.js";

const slow = { timeout: 120_000 };

describe("address lists", () => {
  it("reads a list like the Go SDK and names what is wrong", limit, () => {
    assert.deepEqual(baseURLs(" a:1 , b:2,c:3", false), ["http://a:1", "http://b:2", "http://c:3"]);
    assert.deepEqual(baseURLs("a:1,https://b:2", true), ["https://a:1", "https://b:2"]);
    const cases: [string, string][] = [
      ["a:1,,b:2", "empty entry (number 2)"],
      ["a:1,", "empty entry (number 2)"],
      ["a:1,a:1", "names a:1 twice"],
      ["http://a:1,https://b:2", "mixes http:// and https://"],
      ["a:1,b", "not host:port"],
    ];
    for (const [list, want] of cases) {
      assert.throws(() => baseURLs(list, false), (e: Error) => e instanceof InvalidArgumentError && e.message.includes(want), list);
    }
    assert.deepEqual(resolve({}, { GOVERNOR_ADDR: "a:1,b:2" }).baseUrls, ["http://a:1", "http://b:2"]);
  });
});

/** leaderOf waits for the member that opens a session of team-a (it leads
 * and has set up the configuration's tenants), and returns its index. */
async function leaderOf(gs: Governord[]): Promise<number> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    for (const [i, g] of gs.entries()) {
      try {
        await new Admin(g.addr).api.openSession({}, { headers: { authorization: `Bearer ${teamKey}` } });
        return i;
      } catch {
        // not the leader, or none yet
      }
    }
  }
  throw new Error("no member leads within a minute");
}

describe("a cluster", () => {
  let gs: Governord[];
  let lead: number;
  before(async () => {
    gs = await Governord.cluster(3);
    lead = await leaderOf(gs);
  });
  after(async () => {
    await Promise.all(gs.map((g) => g.stop()));
  });

  it("follows the leader a member names, though the list leaves it out", slow, async () => {
    const followers = [...gs.keys()].filter((i) => i !== lead);
    const client = await dial({ addr: followers.map((i) => gs[i]!.addr).join(","), apiKey: teamKey });
    try {
      const node = await client.task({ name: "followed" }, async (t) => {
        await consume("http", 3);
        return t.id;
      });
      assert.equal(await new Admin(gs[lead]!.addr).used(node, "http"), 3n);
    } finally {
      await client.close();
    }
  });

  it("sends again after an unanswered attempt only a call that applies nothing twice", slow, async () => {
    const proxy = await Proxy.start(gs[lead]!.addr);
    try {
      const api = createClient(GovernorService, new RoutedTransport(resolve({ addr: `${proxy.addr},${gs[lead]!.addr}` }), []));
      const admin = { headers: { authorization: `Bearer ${adminKey}` } };
      const { token } = await api.openSession({}, admin);
      const auth = { headers: { authorization: `Bearer ${token}` } };
      proxy.pause();
      const cut = setTimeout(() => void proxy.close(), 300);
      const node = await api.getNode({ nodeId: 1n }, auth); // a read: sent again to the next address
      assert.equal(node.node?.id, 1n);
      clearTimeout(cut);

      const again = await Proxy.start(gs[lead]!.addr);
      try {
        const api2 = createClient(GovernorService, new RoutedTransport(resolve({ addr: `${again.addr},${gs[lead]!.addr}` }), []));
        await api2.getNode({ nodeId: 1n }, auth); // the connection through the proxy is open
        again.pause();
        setTimeout(() => void again.close(), 300);
        // an open session changes state and has no request id: its outcome is
        // unknown, so it is not sent again
        await assert.rejects(api2.openSession({}, admin), (e: Error) => !e.message.includes("no governord answered"));
      } finally {
        await again.close();
      }
    } finally {
      await proxy.close();
    }
  });

  it("keeps the session and loses no acknowledged consume when the leader is killed", slow, async () => {
    const client = await dial({ addr: gs.map((g) => g.addr).join(","), apiKey: teamKey, resendMs: 30_000 });
    try {
      const node = await client.task({ name: "failover" }, async (t) => {
        for (let i = 0; i < 5; i++) {
          await consume("http", 1);
        }
        await gs[lead]!.kill();
        for (let i = 0; i < 5; i++) {
          await consume("http", 1);
        }
        return t.id;
      });
      const now = await leaderOf(gs);
      assert.equal(await new Admin(gs[now]!.addr).used(node, "http"), 10n);
    } finally {
      await client.close();
    }
  });
});
