// Package limiters provides exact, deterministic rate limiters.
//
// The algorithms (see Algorithm and AllAlgorithms) are fixed window,
// sliding log, sliding counter, token bucket, leaky bucket (meter form),
// GCRA, the queue form of the leaky bucket, sliding buckets, the fixed
// window that counts refused hits too (Envoy's) and the leaky queue in whole
// ticks and parts of a request (nginx limit_req's). Beside them, the
// library kinds (LibraryAlgorithms) reproduce real libraries as they
// compute, floating-point arithmetic and quirks included: x/time/rate,
// redis_rate, throttled, Envoy's ratelimit, nginx limit_req with its zone,
// HAProxy's http_req_rate and Spring Cloud Gateway; package presets builds
// them from each library's own parameters. Each is a
// pure transition over a small per-key state value (FixedWindowState,
// SlidingLogState, ...) with a Step method: the algorithm is state plus a
// time rule, and everything else about it (its name, parameters, texts and
// bounds) is described once, in one table. A Rule is an algorithm with its
// Policy, validated. Where the states live is a separate matter: Table
// keeps them in a dense array for a single owner that interns its keys,
// Group does the same for several rules at once (any algorithms, each with
// its own policy) with a key's states side by side, and Keyed keeps them in
// sharded maps for concurrent callers.
//
// Time is always passed in, as int64 nanoseconds on any clock, and nothing
// here reads the system clock: the same requests give the same decisions.
// Arithmetic is exact, but for the library kinds' own. Rates are rationals (Rate), tokens and estimates are
// compared in integers, with 128-bit products where needed, so ten refills
// of a tenth of a token make exactly one token.
//
// Table.Gauge reads the number that stands for a key's state (a window's
// count, a bucket's tokens, a sliding counter's estimate) at any time, and
// when it next stops moving on a straight line, so that a picture can draw
// the state exactly as it evolves between requests.
//
// Every request carries a cost, a positive integer (1 for a plain request).
// A decision reports whether the request is allowed and what a client needs
// to know: how much is left, when a retry would succeed, when the key is
// back to its fresh state, and why a request was refused.
package limiters
