// Conversions between the client's numbers and the wire's, checked.

import { create } from "@bufbuild/protobuf";
import { DurationSchema, type Duration } from "@bufbuild/protobuf/wkt";
import { InvalidArgumentError } from "./errors.js";

const maxInt64 = (1n << 63n) - 1n;

/** int64 checks that n is a whole number from 0 to 2^63-1 and returns it as
 * a bigint; what names the argument in the error. */
export function int64(what: string, n: number | bigint): bigint {
  let v: bigint;
  if (typeof n === "bigint") {
    v = n;
  } else if (Number.isSafeInteger(n)) {
    v = BigInt(n);
  } else {
    throw new InvalidArgumentError(`governor: ${what} must be a whole number from 0 to 2^63-1, got ${n}`);
  }
  if (v < 0n || v > maxInt64) {
    throw new InvalidArgumentError(`governor: ${what} must be a whole number from 0 to 2^63-1, got ${v}`);
  }
  return v;
}

/** duration converts milliseconds, a finite number at least 0, to a
 * Duration; what names the argument in the error. */
export function duration(what: string, ms: number): Duration {
  if (!Number.isFinite(ms) || ms < 0) {
    throw new InvalidArgumentError(`governor: ${what} must be a finite number of milliseconds, at least 0, got ${ms}`);
  }
  const whole = Math.floor(ms);
  return create(DurationSchema, {
    seconds: BigInt(Math.floor(whole / 1000)),
    nanos: (whole % 1000) * 1_000_000 + Math.floor((ms - whole) * 1_000_000),
  });
}

/** durationMs converts a Duration to milliseconds. */
export function durationMs(d: Duration): number {
  return Number(d.seconds) * 1000 + d.nanos / 1_000_000;
}
