// Package redisstore keeps the limiters of package limiters in Redis, so
// that several processes share one limit per key.
//
// A Store decides exactly as limiters.Keyed does for the same algorithm,
// policy and requests: every field of every Decision is equal, RetryAfter
// and ResetAfter included, for every algorithm of package limiters. Each
// algorithm is a Lua script, run atomically by Redis with EVALSHA, that
// ports the algorithm's Step: the same integers, kept as the in-memory
// states keep them.
//
// # Time
//
// Times are int64 nanoseconds, as everywhere in ratesim. Lua's numbers are
// doubles, exact below 2^53, so the scripts hold times (and durations that
// may pass 2^52 ns, such as a window of a year) as seconds and
// nanoseconds, and count them in full: there is no epoch, any time of the
// int64 range is taken, and a store works for as long as it runs.
// Nanoseconds, because the in-memory limiters decide in nanoseconds: a
// RetryAfter of a third of a millisecond is exact there, and only a store
// that counts nanoseconds can give the same one.
//
// There are two clocks (Options.Clock). CallerClock, the default, uses the
// time the caller passes: replays of a trace need it, and so does any
// comparison with the in-memory limiters. But the clocks of several
// instances of a service drift apart, and a key judged by two of them
// then sees its time jump back and forth. ServerClock uses the Redis
// server's TIME inside the script, one clock for every instance, at a
// microsecond's resolution; the argument now is ignored (Result.At says
// the server's time). Windows are aligned on the server's clock as the
// in-memory limiters align them on the caller's: the caller sends, with
// each request, a window start near its own clock, and the script counts
// from it; the two clocks must agree within 52 days (ErrTimeRange).
//
// # Bounds
//
// Amounts (counts, levels, debts) stay plain integers below 2^53. New
// refuses, with a *ParamError naming the parameter, a policy that could
// take one further: a limit above 2^53-1; a sliding counter's limit above
// 9,007,198 (its estimate multiplies counts by the window: 100 a day and
// 10,000 an hour are fine); sliding buckets above MaxBuckets (4096)
// sub-windows; a bucket, GCRA or queue whose full drain, capacity x per,
// passes 2^53 (a capacity of 1,000,000 at 1 per 10 s does); a tick queue
// whose full queue takes 2^52 ns or more to drain.
//
// # Cost of a request
//
// A script reads and writes one key per limiter. Every algorithm but two
// does a fixed amount of work per request. Sliding buckets read each of a
// key's sub-windows (at most MaxBuckets). The sliding log keeps its
// entries in a sorted set whose members sort by time and carry running
// totals: a request finds its window in O(log n) for n entries, whatever
// the limit, and drops at most eight expired entries per admission, so
// no request does work in proportion to the log. A key's entries number
// about the limit at most.
//
// # Keys
//
// A key's state under a limiter lives at PREFIX{TAG}:LIMITER:ALGORITHM:
// one Redis key. TAG is the key escaped ("%" as %25, "{" as %7B, "}" as
// %7D, the empty key as "%"), so that Redis Cluster's hash tag is never
// empty and holds nothing a key can choose: every state of a key lives in
// one slot, and two keys never share a name. The algorithm in the name
// keeps limiters of one name but different algorithms, in different
// processes, from reading each other's state. Any string is a key.
//
// Each write sets the key to expire when the state is fresh again, as
// limiters.Keyed forgets a key, so expiry changes no decision: under
// ServerClock at the instant the script's one reading of the server's
// clock says (PEXPIREAT), under CallerClock that long after the write. Under
// CallerClock that assumes the caller's time runs no slower than the
// server's, which holds for live callers and for replays at or above real
// speed; Options.ExpiryMargin covers the pauses of others.
//
// A state read under another policy than the one it was written under (a
// deploy that changed the limit in place) is taken as it stands: a count
// or a level above a new, lower limit reads as full, and the requests are
// refused until enough of it has passed; a level kept at another rate's
// scale is rescaled, rounded up.
//
// # Failures
//
// A request the store cannot decide because Redis cannot decide for now
// (the server unreachable or timed out, out of memory, loading, busy, a
// Redis Cluster down: see Transient) is decided by Options.Failure:
// returned as an error, or allowed or refused and counted
// (Store.FailureDecisions). Every other error is returned whatever the
// policy: a reply that says the store is misconfigured (WRONGTYPE:
// another application's data at a state's name; NOPERM: an ACL user
// without EVALSHA; READONLY: a replica; NOAUTH), a corrupt state, a
// cancelled context. Scripts are never sent again after a timeout, which
// may have committed: only a reply that says the script did not run sends
// it again, NOSCRIPT (by EVAL), and, while a cluster's slots move,
// TRYAGAIN and a MOVED or ASK that go-redis did not follow. A batch's
// requests for one key and limiter go in one script call, so a call sent
// again is the only one for its key: a SCRIPT FLUSH or a restart under
// concurrent pipelines delays requests, and fails none. The scripts are
// commands go-redis never re-sends on its own, though its Cluster client
// would other commands after a timeout, whatever MaxRetries says; clients
// made by NewClient do not retry either, and callers who pass their own
// client should set MaxRetries: -1 in its options all the same.
//
// # Connecting
//
// ParseURL reads redis://, rediss:// (TLS), redis+cluster://,
// redis+sentinel:// (a master found through its Sentinels) and unix://
// URLs, with credentials; errors and Address.String never show a
// password (Redact). Stats reads what says whether a server keeps the
// states: its maxmemory-policy, and the keys it evicted and flushed.
package redisstore
