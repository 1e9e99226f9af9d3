// governedFetch against a local HTTP server: it charges "http", holds an
// "http" lease until the body is read, and reads overload the way the Go
// SDK's Transport does.

import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { after, before, describe, it } from "node:test";
import { DeniedError, NoTaskError, TaskEndedError, dial, governedFetch, overloaded, type Client } from "../src/index.js";
import { Admin, Governord, teamKey, limit } from "./harness.js";

describe("governedFetch", () => {
  let g: Governord;
  let admin: Admin;
  let client: Client;
  let server: Server;
  let base = "";
  let hits = 0;
  before(async () => {
    g = await Governord.start();
    admin = new Admin(g.addr);
    client = await dial({ addr: g.addr, apiKey: teamKey });
    server = createServer((req, res) => {
      hits++;
      if (req.url === "/hang") {
        return; // never answers
      }
      res.writeHead(req.url === "/busy" ? 503 : 200, { "retry-after": "1" });
      res.end("page ".repeat(1000));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const a = server.address();
    base = `http://127.0.0.1:${typeof a === "object" && a ? a.port : 0}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await client.close();
    await g.stop();
  });

  it("charges one unit per request and holds a lease until the body is read", limit, async () => {
    const f = governedFetch();
    await client.task({ name: "fetching", quotas: { http: 2 }, limits: { http: 1 } }, async (t) => {
      const res = await f(`${base}/page`);
      assert.equal(res.status, 200);
      assert.equal(res.url, `${base}/page`);
      assert.equal(await admin.held(t.id, "http"), 1n, "no lease is held while the body is unread");
      assert.equal((await res.text()).length, 5000);
      assert.equal(await admin.held(t.id, "http"), 0n, "the lease outlived the body");
      const busy = await f(`${base}/busy`);
      await busy.body?.cancel();
      assert.equal(await admin.held(t.id, "http"), 0n, "a cancelled body kept its lease");
      assert.equal(await admin.used(t.id, "http"), 2n);
      const before = hits;
      await assert.rejects(f(`${base}/page`), DeniedError);
      assert.equal(hits, before, "a denied request reached the server");
    });
  });

  it("aborts the request when the task ends, and needs a task", limit, async () => {
    const f = governedFetch();
    await assert.rejects(f(`${base}/page`), NoTaskError);
    const err = await client
      .task({ name: "hanging", deadline: new Date(Date.now() + 300) }, async () => {
        await f(`${base}/hang`);
      })
      .catch((e) => e);
    assert.ok(err instanceof TaskEndedError, `a request past the task's deadline ended with ${err}`);
  });

  it("reads 429, 503 and Retry-After as overload, but not on a redirect", limit, () => {
    const cases: [number, Record<string, string>, boolean][] = [
      [200, {}, false],
      [429, {}, true],
      [503, {}, true],
      [200, { "retry-after": "120" }, true],
      [500, { "retry-after": "Wed, 21 Oct 2026 07:28:00 GMT" }, true],
      [200, { "retry-after": "soon" }, false],
      [301, { "retry-after": "5", location: "/x" }, false],
    ];
    for (const [status, headers, want] of cases) {
      const res = new Response(null, { status, headers });
      assert.equal(overloaded(res), want, `status ${status} with ${JSON.stringify(headers)}`);
    }
  });
});
