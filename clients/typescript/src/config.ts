// Where governord is and how to reach it: the environment, overridden by
// dial's options, read the way the Go SDK reads them.

import { readFileSync } from "node:fs";
import { InvalidArgumentError } from "./errors.js";

/** Where governord listens unless told otherwise. */
export const defaultAddr = "127.0.0.1:7600";

/** Connection settings; each overrides its environment variable. */
export interface ConnectionOptions {
  /** host:port or an http(s):// URL, in place of GOVERNOR_ADDR; or a
   * comma-separated list of them, a cluster's members: calls go to the
   * leader, following a member's Governor-Leader answer. */
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
  /** The first address's URL. */
  baseUrl: string;
  /** Every address's URL, in the order given. */
  baseUrls: string[];
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
  const baseUrls = baseURLs(addr, tls || caFile !== "");
  let ca: Buffer | undefined;
  if (caFile !== "") {
    try {
      ca = readFileSync(caFile);
    } catch (e) {
      throw new InvalidArgumentError(`governor connection settings: read CA file: ${(e as Error).message}`, { cause: e });
    }
  }
  return { baseUrl: baseUrls[0]!, baseUrls, apiKey: opts.apiKey ?? env.GOVERNOR_API_KEY?.trim() ?? "", ca };
}

/** baseURLs returns the URL of every address a list names, in the order
 * given, or the default's when it is empty. Each entry is host:port or an
 * http(s) URL; an empty entry, an address listed twice, or a list that
 * mixes http and https is refused. */
export function baseURLs(given: string, tls: boolean): string[] {
  if (given === "") {
    return [baseURL("", tls)];
  }
  const urls: string[] = [];
  given.split(",").forEach((raw, i) => {
    const entry = raw.trim();
    if (entry === "") {
      throw new InvalidArgumentError(`governor connection settings: address list "${given}" has an empty entry (number ${i + 1}); separate host:port addresses with single commas`);
    }
    const url = baseURL(entry, tls);
    for (const prev of urls) {
      if (prev === url) {
        throw new InvalidArgumentError(`governor connection settings: address list "${given}" names ${entry} twice; list each governord once`);
      }
      if (schemeOf(prev) !== schemeOf(url)) {
        throw new InvalidArgumentError(`governor connection settings: address list "${given}" mixes http:// and https://; every node of a cluster is reached the same way`);
      }
    }
    urls.push(url);
  });
  return urls;
}

function schemeOf(url: string): string {
  return url.slice(0, url.indexOf("://"));
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
