// Connection settings are read like the Go SDK reads them.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Governord, limit, teamKey } from "./harness.js";
import { baseURL, resolve } from "../src/config.js";
import { InvalidArgumentError, UnavailableError, consume, dial } from "../src/index.js";

describe("connection settings", () => {
  it("turns addresses into base URLs and names what is wrong", limit, () => {
    const cases: [string, boolean, string][] = [
      ["", false, "http://127.0.0.1:7600"],
      ["gov.internal:9000", false, "http://gov.internal:9000"],
      ["gov:9000", true, "https://gov:9000"],
      ["https://gov:9000/", false, "https://gov:9000"],
      ["http://[::1]:7600", false, "http://[::1]:7600"],
      ["http://gov:1", true, "says http://"],
      ["gov", false, "not host:port"],
      ["gov:http", false, 'port "http"'],
      ["gov:70000", false, "1 to 65535"],
    ];
    for (const [addr, tls, want] of cases) {
      if (want.includes("://") && !want.startsWith("says")) {
        assert.equal(baseURL(addr, tls), want, `baseURL(${addr}, ${tls})`);
      } else {
        assert.throws(() => baseURL(addr, tls), (e: Error) => e instanceof InvalidArgumentError && e.message.includes(want));
      }
    }
  });

  it("reads the environment, and options override it", limit, () => {
    const env = { GOVERNOR_ADDR: " gov:1234 ", GOVERNOR_API_KEY: "k1", GOVERNOR_TLS: "true" };
    assert.deepEqual(resolve({}, env), { baseUrl: "https://gov:1234", baseUrls: ["https://gov:1234"], apiKey: "k1", ca: undefined });
    assert.deepEqual(resolve({ addr: "other:1", apiKey: "k2", tls: false }, env), { baseUrl: "http://other:1", baseUrls: ["http://other:1"], apiKey: "k2", ca: undefined });
    assert.throws(() => resolve({}, { GOVERNOR_TLS: "sometimes" }), /not a boolean/);
    assert.throws(() => resolve({}, { GOVERNOR_CA_FILE: "/nonexistent/ca.pem" }), InvalidArgumentError);
  });

  it("refuses bad options before dialing", limit, async () => {
    await assert.rejects(dial({ addr: "127.0.0.1:1", ttlMs: -1 }), InvalidArgumentError);
    await assert.rejects(dial({ addr: "127.0.0.1:1", resendMs: Number.NaN }), InvalidArgumentError);
  });
});

describe("TLS", () => {
  let g: Governord;
  before(async () => {
    g = await Governord.start({ tls: true });
  });
  after(() => g.stop());

  it("dials with the CA file from the environment, and refuses an unknown CA", limit, async () => {
    const env = { GOVERNOR_ADDR: g.addr, GOVERNOR_API_KEY: teamKey, GOVERNOR_CA_FILE: g.caFile };
    Object.assign(process.env, env);
    try {
      const client = await dial();
      try {
        await client.task({ name: "over-tls" }, () => consume("http", 1));
      } finally {
        await client.close();
      }
      delete process.env.GOVERNOR_CA_FILE;
      process.env.GOVERNOR_TLS = "true";
      await assert.rejects(dial(), UnavailableError);
    } finally {
      for (const k of [...Object.keys(env), "GOVERNOR_TLS"]) {
        delete process.env[k];
      }
    }
  });
});
