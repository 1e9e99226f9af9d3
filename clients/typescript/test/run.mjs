// Runs the package's tests: builds governord from this repository once,
// then every compiled test file with node --test, one file at a time.
// Arguments are passed on to node --test (for example --test-name-pattern).

import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = fileURLToPath(new URL("..", import.meta.url));
const bin = mkdtempSync(join(tmpdir(), "governor-node-bin-"));
try {
  const governord = join(bin, "governord");
  execFileSync("go", ["build", "-o", governord, "./cmd/governord"], { cwd: join(pkg, "../.."), stdio: "inherit" });
  const dir = join(pkg, "dist/test");
  const tests = readdirSync(dir)
    .filter((f) => f.endsWith(".test.js"))
    .map((f) => join(dir, f));
  const run = spawnSync(process.execPath, ["--test", "--test-concurrency=1", ...process.argv.slice(2), ...tests], {
    stdio: "inherit",
    env: { ...process.env, GOVERNORD_BIN: governord },
    timeout: 15 * 60 * 1000,
  });
  process.exitCode = run.status ?? 1;
} finally {
  rmSync(bin, { recursive: true, force: true });
}
