// The example program runs to its end against governord and keeps to its
// budget.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import { Governord, limit, teamKey } from "./harness.js";

describe("examples/load", () => {
  let g: Governord;
  before(async () => {
    g = await Governord.start();
  });
  after(() => g.stop());

  it("fetches no more pages than its budget", limit, async () => {
    const program = fileURLToPath(new URL("../examples/load.js", import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, [program, "3", "25", "6"], {
      env: { ...process.env, GOVERNOR_ADDR: g.addr, GOVERNOR_API_KEY: teamKey },
    });
    const m = /(\d+) pages of a budget of 25, (\d+) stored/.exec(stdout);
    assert.ok(m, `unexpected output:\n${stdout}`);
    assert.ok(Number(m[1]) > 0 && Number(m[1]) <= 25, stdout);
    assert.equal(m[1], m[2]);
  });
});
