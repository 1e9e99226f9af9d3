// Where governord is and how to reach it: the environment, overridden by
// dial's options, read the way the Go SDK reads them.

import { readFileSync } from "node:fs";
import { InvalidArgumentError } from "./errors.js";

/** Where governord listens unless told otherwise. */
export const defaultAddr = "127.0.0.1:7600";

/** Connection settings; each overrides its environment variable. */
export interface ConnectionOptions {
  /** host:port or an http(s):// URL, in place of GOVERNOR_ADDR. */
  addr?: string;
  /** The API key, in place of GOVERNOR_API_KEY. */
  apiKey?: string;
  /** HTTPS, in place of GOVERNOR_TLS (true or false). */
  tls?: boolean;
  /** PEM file of the certificates that sign governord's, in place of
   * GOVERNOR_CA_FILE; it implies TLS. */
  caFile?: string;
}

/** Connection is what the settings resolve to. */
export interface Connection {
  baseUrl: string;
  apiKey: string;
  ca: Buffer | undefined;
}

const trueWords = new Set(["1", "t", "T", "TRUE", "true", "True"]);
const falseWords = new Set(["0", "f", "F", "FALSE", "false", "False"]);

/** resolve reads the environment, applies opts on top and checks the
 * result; a variable that is set but malformed is an error. */
export function resolve(opts: ConnectionOptions, env: NodeJS.ProcessEnv = process.env): Connection {
  const addr = opts.addr ?? env.GOVERNOR_ADDR?.trim() ?? "";
  const caFile = opts.caFile ?? env.GOVERNOR_CA_FILE?.trim() ?? "";
  let tls = opts.tls ?? false;
  const word = env.GOVERNOR_TLS?.trim() ?? "";
  if (opts.tls === undefined && word !== "") {
    if (!trueWords.has(word) && !falseWords.has(word)) {
      throw new InvalidArgumentError(`governor connection settings: GOVERNOR_TLS="${word}" is not a boolean; use true or false`);
    }
    tls = trueWords.has(word);
  }
  const baseUrl = baseURL(addr, tls || caFile !== "");
  let ca: Buffer | undefined;
  if (caFile !== "") {
    try {
      ca = readFileSync(caFile);
    } catch (e) {
      throw new InvalidArgumentError(`governor connection settings: read CA file: ${(e as Error).message}`, { cause: e });
    }
  }
  return { baseUrl, apiKey: opts.apiKey ?? env.GOVERNOR_API_KEY?.trim() ?? "", ca };
}

/** baseURL returns the URL the API is served under, checking the address. */
export function baseURL(given: string, tls: boolean): string {
  let addr = given === "" ? defaultAddr : given;
  let scheme = tls ? "https" : "http";
  if (addr.startsWith("https://")) {
    addr = addr.slice("https://".length);
    scheme = "https";
  } else if (addr.startsWith("http://")) {
    if (tls) {
      throw new InvalidArgumentError(`governor connection settings: address "${given}" says http:// but TLS is requested; use https:// or host:port`);
    }
    addr = addr.slice("http://".length);
  }
  addr = addr.replace(/\/$/, "");
  const m = /^(\[[^\]]+\]|[^:[\]]+):([^:]*)$/.exec(addr);
  if (!m || m[2] === "") {
    throw new InvalidArgumentError(`governor connection settings: address "${given}" is not host:port (for example ${defaultAddr})`);
  }
  const port = m[2];
  if (!/^\d+$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    throw new InvalidArgumentError(`governor connection settings: address "${given}" has port "${port}"; a port is a number from 1 to 65535`);
  }
  return `${scheme}://${m[1]}:${port}`;
}
