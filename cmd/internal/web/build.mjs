// Builds the dashboard into the directory named by the first argument
// (dist, which is committed and embedded by governord): the bundle of
// src/main.ts, and the page and style copied as they are. The output depends
// on the sources and the pinned esbuild only, so a rebuild of unchanged
// sources is byte for byte the same.
import { build } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";

const out = process.argv[2] ?? "dist";
mkdirSync(out, { recursive: true });
await build({
  entryPoints: ["src/main.ts"],
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2022",
  legalComments: "none",
  charset: "utf8",
  outfile: join(out, "app.js"),
  logLevel: "warning",
});
for (const f of ["index.html", "app.css"]) copyFileSync(join("src", f), join(out, f));
