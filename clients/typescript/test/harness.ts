// What the tests share: governord built from this repository and run as a
// process on a free loopback port, an admin view of what it holds, and a
// TCP proxy that can stop passing bytes.

import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, connect, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { createClient, type Client as ServiceClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { GovernorService } from "../src/gen/governor/v1/governor_pb.js";

/** The repository's root, seen from dist/test. */
export const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));

export const adminKey = "admin-key-0123456789";
export const teamKey = "team-a-key-0123456789";
export const otherKey = "team-b-key-0123456789";

let built: string | undefined;

/** governordBin returns governord built from this repository: the binary
 * GOVERNORD_BIN names (test/run.mjs builds it once for every test file), or
 * one go build makes now. */
export function governordBin(): string {
  if (process.env.GOVERNORD_BIN) {
    return process.env.GOVERNORD_BIN;
  }
  if (!built) {
    built = join(mkdtempSync(join(tmpdir(), "governor-node-bin-")), "governord");
    execFileSync("go", ["build", "-o", built, "./cmd/governord"], { cwd: repoRoot, stdio: "inherit" });
  }
  return built;
}

/** Governord is governord running as a process, recording in a SQLite
 * file in its directory, with two tenants: team-a and team-b. */
export class Governord {
  readonly dir: string;
  proc: ChildProcess | undefined;
  /** host:port of the API, once it serves. */
  addr = "";

  private constructor(dir: string) {
    this.dir = dir;
  }

  /** The TLS block of the configuration; empty for plain text. */
  #tls = "";
  /** Where the state lives: a SQLite file, or a cluster section. */
  #store = "";

  /** start runs a governord in a new directory, removed by stop(). With
   * tls, it serves TLS with a self-signed certificate for 127.0.0.1, whose
   * PEM file is caFile. */
  static async start(opts: { tls?: boolean } = {}): Promise<Governord> {
    const g = new Governord(mkdtempSync(join(tmpdir(), "governor-node-test-")));
    if (opts.tls) {
      const [cert, key] = [join(g.dir, "server.crt"), join(g.dir, "server.key")];
      execFileSync(
        "openssl",
        ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
          "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert],
        { stdio: "ignore" },
      );
      g.#tls = `tls: {cert_file: "${cert}", key_file: "${key}"}\n`;
    }
    await g.run("127.0.0.1:0");
    return g;
  }

  /** cluster runs n governord as the members of a new cluster, each in a
   * directory of its own, and waits until each serves. */
  static async cluster(n: number): Promise<Governord[]> {
    const ports = await freePorts(2 * n);
    const peers = ports.slice(0, n).map((p, i) => `    - {id: n${i}, raft: "127.0.0.1:${ports[n + i]}", api: "127.0.0.1:${p}"}`).join("\n");
    const gs = Array.from({ length: n }, () => new Governord(mkdtempSync(join(tmpdir(), "governor-node-member-"))));
    gs.forEach((g, i) => {
      g.#store = `cluster:\n  node_id: n${i}\n  data_dir: "${join(g.dir, "data")}"\n  bootstrap: true\n  peers:\n${peers}\n`;
    });
    await Promise.all(gs.map((g, i) => g.run(`127.0.0.1:${ports[i]}`)));
    return gs;
  }

  /** The PEM file of the certificate a TLS governord serves. */
  get caFile(): string {
    return join(this.dir, "server.crt");
  }

  /** run starts the process listening on listen and waits until it
   * serves. */
  async run(listen: string): Promise<void> {
    const cfg = join(this.dir, "governor.yaml");
    writeFileSync(
      cfg,
      `listen: ${listen}
metrics_listen: "off"
${this.#store || `database_url: "sqlite:${join(this.dir, "governor.db")}"`}
admin_key: ${adminKey}
tenants:
  - name: team-a
    api_key: ${teamKey}
  - name: team-b
    api_key: ${otherKey}
sessions: {min_ttl: 100ms, default_ttl: 30s, max_ttl: 1h}
reap_interval: 20ms
log: {format: json}
${this.#tls}`,
    );
    const p = spawn(governordBin(), ["-config", cfg], { cwd: this.dir, stdio: ["ignore", "pipe", "pipe"] });
    this.proc = p;
    let output = "";
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`governord does not serve after a minute:\n${output}`)), 60_000);
      p.on("exit", (code) => reject(new Error(`governord exited with ${code} before serving:\n${output}`)));
      for (const stream of [p.stdout!, p.stderr!]) {
        createInterface({ input: stream }).on("line", (line) => {
          output += line + "\n";
          try {
            const rec = JSON.parse(line) as { msg?: string; api?: string };
            if (rec.msg === "serving" && rec.api) {
              clearTimeout(timer);
              resolve(rec.api);
            }
          } catch {
            // not a log record
          }
        });
      }
    });
    this.addr = url.replace(/^https?:\/\//, "");
  }

  /** kill ends the process with SIGKILL and waits until it is gone. */
  async kill(): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) {
      return;
    }
    const exited = new Promise((resolve) => p.once("exit", resolve));
    p.kill("SIGKILL");
    await exited;
  }

  /** restart runs governord again on the same address and record. */
  async restart(): Promise<void> {
    await this.kill();
    await this.run(this.addr);
  }

  /** stop kills the process and removes its directory. */
  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** freePorts returns n loopback ports that were free a moment ago: a
 * cluster's members must know each other's addresses before they start. */
async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: n }, () => new Promise<Server>((resolve) => {
      const s = createServer();
      s.listen(0, "127.0.0.1", () => resolve(s));
    })),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

/** Admin is a raw API client on a session of the admin key, for looking
 * at and changing what governord holds. */
export class Admin {
  readonly api: ServiceClient<typeof GovernorService>;
  #headers: Record<string, string> = {};

  constructor(addr: string) {
    this.api = createClient(GovernorService, createConnectTransport({ baseUrl: `http://${addr}`, httpVersion: "1.1" }));
  }

  async #opts() {
    if (!this.#headers.authorization) {
      const res = await this.api.openSession({}, { headers: { authorization: `Bearer ${adminKey}` } });
      this.#headers = { authorization: `Bearer ${res.token}` };
    }
    return { headers: this.#headers };
  }

  /** used is a node's use of a resource. */
  async used(node: bigint, resource: string): Promise<bigint> {
    const res = await this.api.getNode({ nodeId: node }, await this.#opts());
    return res.node?.resources[resource]?.used ?? 0n;
  }

  /** held is the number of leases of a class held in a node's subtree. */
  async held(node: bigint, cls: string): Promise<bigint> {
    const res = await this.api.getNode({ nodeId: node }, await this.#opts());
    return res.node?.classes[cls]?.held ?? 0n;
  }

  /** parent is a node's parent. */
  async parent(node: bigint): Promise<bigint> {
    const res = await this.api.getNode({ nodeId: node }, await this.#opts());
    return res.node?.parentId ?? 0n;
  }

  /** children names the children governord holds under a node. */
  async children(node: bigint): Promise<string[]> {
    const res = await this.api.getNode({ nodeId: node, includeChildren: true }, await this.#opts());
    return res.children.map((c) => c.name);
  }

  /** leaseValid says whether a lease is held. */
  async leaseValid(id: bigint): Promise<boolean> {
    return (await this.api.validate({ leaseId: id }, await this.#opts())).valid;
  }

  /** cancel cancels a node. */
  async cancel(node: bigint): Promise<void> {
    await this.api.cancelNode({ nodeId: node, reason: "test" }, await this.#opts());
  }
}

/** Proxy passes TCP bytes between clients and governord until paused:
 * then it holds every byte back, as a network that has gone silent. */
export class Proxy {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #paused = false;
  addr = "";

  private constructor(target: string) {
    const [host, port] = target.split(":");
    this.#server = createServer((client) => {
      const upstream = connect(Number(port), host);
      for (const s of [client, upstream]) {
        this.#sockets.add(s);
        s.on("close", () => this.#sockets.delete(s));
        s.on("error", () => s.destroy());
      }
      const pass = (from: Socket, to: Socket) =>
        from.on("data", (b) => {
          if (!this.#paused) {
            to.write(b);
          }
        });
      pass(client, upstream);
      pass(upstream, client);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
  }

  static async start(target: string): Promise<Proxy> {
    const p = new Proxy(target);
    await new Promise<void>((resolve) => p.#server.listen(0, "127.0.0.1", resolve));
    const a = p.#server.address();
    p.addr = typeof a === "object" && a ? `127.0.0.1:${a.port}` : "";
    return p;
  }

  /** pause drops every byte from now on, both ways. */
  pause(): void {
    this.#paused = true;
  }

  /** resume passes bytes again; what was dropped stays lost. */
  resume(): void {
    this.#paused = false;
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) {
      s.destroy();
    }
    await new Promise((resolve) => this.#server.close(resolve));
  }
}

/** aborted resolves with the reason when signal fires, and rejects when
 * it has not fired within ms. */
export function aborted(signal: AbortSignal, ms: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      resolve(signal.reason);
      return;
    }
    const timer = setTimeout(() => reject(new Error(`the signal has not fired within ${ms}ms`)), ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve(signal.reason);
    });
  });
}

/** limit bounds each test, so that a broken promise fails the test rather
 * than hanging the run. */
export const limit = { timeout: 30_000 };
