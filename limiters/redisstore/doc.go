// Package redisstore keeps the limiters of package limiters in Redis, so
// that several processes share one limit per key.
//
// A Store decides exactly as limiters.Keyed does for the same algorithm,
// policy and requests: every field of every Decision is equal, RetryAfter
// and ResetAfter included. Each algorithm is a Lua script, run atomically
// by Redis with EVALSHA, that ports the algorithm's Step: the same
// integers, kept as the in-memory states keep them. Lua's numbers are
// doubles, exact for integers below 2^53, so the store works in
// nanoseconds relative to an epoch (Options.Epoch) and refuses, when it is
// made, any policy whose arithmetic could go beyond 2^53.
//
// # Time
//
// Times are int64 nanoseconds, as everywhere in ratesim, counted in the
// scripts from Options.Epoch. Nanoseconds, not microseconds, because the
// in-memory limiters decide in nanoseconds: a RetryAfter of a third of a
// millisecond is exact there, and only a store that counts nanoseconds
// can give the same one. The price is range: 2^52 ns is about 52 days, and
// every request must come within that of the epoch (further out, Allow
// returns ErrTimeRange rather than an inexact decision).
//
// There are two clocks (Options.Clock). CallerClock, the default, uses the
// time the caller passes: replays of a trace need it, and so does any
// comparison with the in-memory limiters. But the clocks of several
// instances of a service drift apart, and a key judged by two of them
// then sees its time jump back and forth. ServerClock uses the Redis
// server's TIME inside the script, one clock for every instance; its
// resolution is a microsecond, the argument now is ignored, and the
// epoch is a Unix time in nanoseconds near the service's start: the
// store serves 52 days from it.
//
// # Keys
//
// A key's state under a limiter lives at PREFIX{KEY}:LIMITER (and
// PREFIX{KEY}:LIMITER:sum for the sliding log's total and counter): the braces make
// Redis Cluster keep all of a key's states in one slot. Each write sets the
// keys to expire when the state is fresh again, as limiters.Keyed forgets
// a key, so expiry changes no decision. Under CallerClock that assumes the
// caller's time runs no slower than the server's, which holds for live
// callers and for replays at or above real speed.
//
// # Failures
//
// A request the store cannot decide (the server is down, times out, or is
// out of memory, or a Redis Cluster is down) is decided by
// Options.Failure: returned as an error, or allowed or refused and counted
// (Store.FailureDecisions). Scripts are never re-sent after a timeout,
// which may have committed: only a reply that says the script did not
// run sends it again, NOSCRIPT (by EVAL), and, while a cluster's slots
// move, TRYAGAIN and a MOVED or ASK that go-redis did not follow. The
// scripts are commands go-redis never re-sends on its own, though its
// Cluster client would other commands after a timeout, whatever
// MaxRetries says; clients made by NewClient do not retry either, and
// callers who pass their own client should set MaxRetries: -1 in its
// options all the same.
package redisstore
