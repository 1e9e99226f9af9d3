// Request ids for the calls that change state.

import { randomBytes } from "node:crypto";

/** RequestIds hands out request ids: a random prefix per client and a
 * counter, so that no two calls share one. A call re-sent after a lost
 * reply repeats its id, and governord applies it once. */
export class RequestIds {
  readonly #prefix = randomBytes(12).toString("hex") + "-";
  #n = 0;

  /** next returns an id never returned before by this generator. */
  next(): string {
    this.#n++;
    return this.#prefix + this.#n;
  }
}
