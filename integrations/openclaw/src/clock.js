// Request times the plugin accepts.
//
// The component reads time only from the `nowMs` of each request and stores it
// with what the request records, so a request stamped far from the real time
// would leave a reply pin, a thread or a ledger line dated there. The plugin
// stamps every request with its own clock (`Date.now()`) and takes no time
// from OpenClaw's events; every call the guard makes is still checked here, so
// a wrong clock or a time in other units is refused instead of stored: a
// `nowMs` further than CLOCK_TOLERANCE_MS from this process's clock, either
// way, is refused unless the guard runs for replay (WARDEN_REPLAY=1).

/** How far a request time may be from the host's clock, either way, in milliseconds (5 minutes). */
export const CLOCK_TOLERANCE_MS = 5 * 60 * 1000;
/** Rule of an answer given because a request time was refused. */
export const CLOCK_REFUSED_RULE = "host.clock-refused";

/** A request time too far from the host's clock. */
export class ClockError extends Error {
  name = "ClockError";
}

function plural(n, word) {
  return n === 1n ? `1 ${word}` : `${n} ${word}s`;
}

/** A duration in words, to the largest unit that fits: `3 days`, `2 h 5 min`, `5 minutes`, `7 min 30 s`, `400 ms`. */
export function span(ms) {
  const S = 1000n, M = 60n * S, H = 60n * M, D = 24n * H;
  if (ms >= D) return plural(ms / D, "day");
  if (ms >= H) return `${ms / H} h ${(ms % H) / M} min`;
  if (ms >= M && ms % M === 0n) return plural(ms / M, "minute");
  if (ms >= M) return `${ms / M} min ${(ms % M) / S} s`;
  if (ms >= S) return `${ms / S} s`;
  return `${ms} ms`;
}

/** Checks the request time `value` of `field` against the host time `hostMs`; throws ClockError. */
export function admitAt(field, value, hostMs) {
  const v = BigInt(value), host = BigInt(hostMs), tolerance = BigInt(CLOCK_TOLERANCE_MS);
  const off = v > host ? v - host : host - v;
  const near = (x) => (x > host ? x - host : host - x) <= tolerance;
  if (off <= tolerance) return;
  const way = v > host ? "ahead of" : "behind";
  let units = "";
  if (near(v / 1_000_000n)) units = " It looks like nanoseconds: it must be milliseconds since the Unix epoch.";
  else if (near(v / 1000n)) units = " It looks like microseconds: it must be milliseconds since the Unix epoch.";
  else if (near(v * 1000n)) units = " It looks like seconds: it must be milliseconds since the Unix epoch.";
  throw new ClockError(
    `${field}: \`${v}\` is ${span(off)} (${off} ms) ${way} this host's clock; a request time may differ from it by at ` +
      `most ${span(tolerance)} (${tolerance} ms).${units} To replay recorded requests with their own times, set WARDEN_REPLAY=1.`,
  );
}

/** Checks every `nowMs` among a guard call's arguments (records carry it as a field). */
export function admitCall(fn, args, { replay = false, now = Date.now } = {}) {
  if (replay) return;
  for (const arg of args) {
    if (arg !== null && typeof arg === "object" && arg.nowMs !== undefined) admitAt(`${fn}: nowMs`, arg.nowMs, now());
  }
}
