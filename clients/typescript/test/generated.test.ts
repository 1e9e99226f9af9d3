// The committed generated code is what the proto generates now.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { describe, it } from "node:test";
import { repoRoot } from "./harness.js";

const genDir = "clients/typescript/src/gen";

function files(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) {
      const path = join(e.parentPath ?? e.path, e.name);
      out.set(relative(dir, path), readFileSync(path, "utf8"));
    }
  }
  return out;
}

describe("generated code", () => {
  it("is current: regenerate with npm run generate", { timeout: 15 * 60_000 }, () => {
    const out = mkdtempSync(join(tmpdir(), "governor-node-gen-"));
    try {
      const buf = execFileSync("go", ["-C", "tools", "tool", "-n", "buf"], { cwd: repoRoot, encoding: "utf8" }).trim();
      execFileSync(buf, ["generate", "--template", "clients/typescript/buf.gen.yaml", "--path", "proto/governor/v1", "-o", out], {
        cwd: repoRoot,
        stdio: "inherit",
      });
      const fresh = files(join(out, genDir));
      const committed = files(join(repoRoot, genDir));
      assert.ok(fresh.size > 0, "buf generated no files");
      assert.deepEqual([...committed.keys()].sort(), [...fresh.keys()].sort(), "the generated files differ in name; run npm run generate");
      for (const [name, text] of fresh) {
        assert.ok(committed.get(name) === text, `${name} differs from what the proto generates; run npm run generate`);
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
