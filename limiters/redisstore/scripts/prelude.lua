-- The part every script of the store begins with. Redis runs Lua 5.1,
-- whose numbers are doubles: exact for integers below 2^53. Times are
-- int64 nanoseconds on the caller's clock or the server's, far beyond
-- that, so the scripts hold a time, and a duration that may pass 2^52 ns
-- (a window of a year), as a pair (s, n): s*10^9 + n ns with 0 <= n <
-- 10^9, and add, subtract and compare pairs exactly. Amounts (counts,
-- scaled levels, debts) are plain integers below 2^53: the store refuses
-- at construction any policy that could take one further. No time is
-- ever counted from an epoch, so a store works for as long as it runs.
--
-- ARGV[1] 'c' to judge at the times the requests carry, 's' at the
-- server's TIME; ARGV[2] 1 to clamp a backwards clock, 0 to refuse;
-- ARGV[3] a margin in ms added to every expiry (Options.ExpiryMargin);
-- ARGV[4...4+P-1] the algorithm's P parameters, then the number of
-- requests and, for each, its operation ('a' allow, 'p' peek, 'm' allow
-- at most), its cost, its time (s, n) and, for the algorithms that cut
-- time into aligned spans, an anchor (s, n): the start of the span of
-- the request's time on the caller's clock, or one near the server's
-- time on the caller's host.
--
-- The requests are judged in order against the key's state, read once
-- and written once. The reply is the server's time (s, n) under the server's
-- clock (0 0 under the caller's), then for each
-- request {allowed, reason, remaining, retry, reset, delay, off,
-- granted}: reason 0 none, 1 the algorithm's refusal, 2 cost above the
-- limit (retry -1: never), 3 clock went backwards, 4 blocked (a blocking
-- counter's key, refused until its block ends). retry, reset and delay
-- count from the time the request was judged at, off from the request's
-- own time to that time (nonzero only when the clock went backwards for
-- the key); each is an integer, or a decimal string past 2^52. Every
-- argument and every stored field is checked before the first write: a
-- script is atomic, not transactional, and an error halfway would leave
-- half a state.

local E9 = 1000000000
local MAXV = 9007199254740991 -- 2^53-1
local MAXS = 9223372037 -- the seconds of an int64 time are within this
local PLAIN = 4503598 -- |s| <= PLAIN: the pair's value is below 2^52

local bad = nil
local function arg(i, name, lo, hi)
  local v = tonumber(ARGV[i])
  if v == nil or v ~= math.floor(v) or v < lo or v > hi then
    bad = bad or name
    return 0
  end
  return v
end

local function corrupt(what)
  return redis.error_reply('ERR redisstore: corrupt state in ' .. what)
end

-- fdiv returns floor(a/b) and a - b*floor(a/b), for b > 0 and |a|+b < 2^53.
-- The double quotient may be rounded to the next integer either way; one
-- correction makes it exact.
local function fdiv(a, b)
  local q = math.floor(a / b)
  local r = a - q * b
  if r < 0 then
    q, r = q - 1, r + b
  elseif r >= b then
    q, r = q + 1, r - b
  end
  return q, r
end

local function cdiv(a, b)
  local q, r = fdiv(a, b)
  if r > 0 then
    q = q + 1
  end
  return q
end

-- str writes an integer in full; Lua's own conversion keeps only 14
-- digits. (redis.call writes a number's integers in full itself.)
local function str(x)
  return string.format('%d', x)
end

-- state reads an integer field of the stored state, or nil when it is not
-- one within [lo, hi].
local function state(v, lo, hi)
  v = tonumber(v)
  if v == nil or v ~= math.floor(v) or v < lo or v > hi then
    return nil
  end
  return v
end

-- norm returns the pair of s*E9 + n for |n| < 2^53.
local function norm(s, n)
  local q, r = fdiv(n, E9)
  return s + q, r
end

local function padd(as, an, bs, bn)
  local s, n = as + bs, an + bn
  if n >= E9 then
    return s + 1, n - E9
  end
  return s, n
end

local function psub(as, an, bs, bn)
  local s, n = as - bs, an - bn
  if n < 0 then
    return s - 1, n + E9
  end
  return s, n
end

local function plt(as, an, bs, bn)
  return as < bs or as == bs and an < bn
end

-- plain returns the value of a pair as one number when it is below 2^52
-- in magnitude, and nil otherwise.
local function plain(s, n)
  if s > PLAIN or s < -PLAIN then
    return nil
  end
  return s * E9 + n
end

-- pmul returns k*(s, n) for an integer k >= 0 with k*E9 and k*|s| below
-- 2^53.
local function pmul(k, s, n)
  return norm(k * s, k * n)
end

-- pdiv returns floor((s, n)/k) as a pair, for s >= 0 and 1 <= k with
-- k*E9 below 2^53.
local function pdiv(s, n, k)
  local q1, r1 = fdiv(s, k)
  local q2 = fdiv(r1 * E9 + n, k)
  return q1, q2
end

-- rep writes a duration of the reply: a number, or a decimal string when
-- it passes 2^52.
local function rep(s, n)
  local v = plain(s, n)
  if v ~= nil then
    return v
  end
  return str(s) .. string.format('%09d', n)
end

-- pstate reads a time stored as two fields, or nil. The start of a span
-- holding an int64 time may lie before the smallest int64.
local function pstate(s, n)
  s, n = state(s, -2 * MAXS, MAXS), state(n, 0, E9 - 1)
  if s == nil or n == nil then
    return nil
  end
  return s, n
end

local clock = ARGV[1]
if clock ~= 'c' and clock ~= 's' then
  bad = 'clock'
end
local clamp = arg(2, 'clamp', 0, 1)
local margin = arg(3, 'margin', 0, MAXV)
-- The server's time, read once, under ServerClock: the time of every
-- request, and the base of the keys' expiry.
local Ts, Tn = 0, 0
if clock == 's' then
  local now = redis.call('TIME')
  Ts, Tn = tonumber(now[1]), tonumber(now[2]) * 1000
end

-- The aligned span of a request's judged time, for the algorithms that
-- cut time into spans of length L (a window, a sub-window, a tick): its
-- start and the time since the start. Lp is L as a plain number when it
-- is below 2^52, else nil.
local Ls, Ln, Lp = nil, nil, nil
local W0s, W0n, Ms, Mn = 0, 0, 0, 0

local function setSpan(s, n)
  Ls, Ln, Lp = s, n, plain(s, n)
end

-- align sets the span of time t from an anchor a, a start of a span near
-- it; false when t is too far from it.
local function align(ts, tn, as, an)
  local ds, dn = psub(ts, tn, as, an)
  if Lp ~= nil then
    local d = plain(ds, dn)
    if d == nil then
      return false
    end
    local _, m = fdiv(d, Lp)
    W0s, W0n = padd(as, an, norm(0, d - m))
    Ms, Mn = norm(0, m)
    return true
  end
  -- L is 2^52 ns or more, d within a few L of 0.
  local ws, wn = as, an
  for _ = 1, 8 do
    if ds < 0 then
      ds, dn = padd(ds, dn, Ls, Ln)
      ws, wn = psub(ws, wn, Ls, Ln)
    elseif not plt(ds, dn, Ls, Ln) then
      ds, dn = psub(ds, dn, Ls, Ln)
      ws, wn = padd(ws, wn, Ls, Ln)
    else
      W0s, W0n, Ms, Mn = ws, wn, ds, dn
      return true
    end
  end
  return false
end

-- judge decides one request (limiters' applyExact): the cost and clock
-- rules around the algorithm's decide. alg.boundary(t) returns whether t
-- is earlier than the state accepts, and the earliest time it does (and,
-- when that time need not start a span, the start of its span).
-- alg.decide(cost, commit, would) judges a request at the time align
-- last set (Js) and returns allowed, remaining, retry, reset and delay
-- (each a pair), and a refusal's reason when it is not 1, keeping the new
-- state only when commit is true; would asks, without commit, for what
-- the request would get if it were taken (a blocking counter's block).
-- judge appends the request's eight fields of the reply to out, and
-- returns whether the state changed and, when it did, how long after the
-- request's own time it is fresh again; nil when the time cannot be
-- aligned.
local Js, Jn = 0, 0 -- the judged time

local function put(out, allowed, code, rem, retry, reset, delay, off, granted)
  local n = #out
  out[n + 1], out[n + 2], out[n + 3], out[n + 4] = allowed, code, rem, retry
  out[n + 5], out[n + 6], out[n + 7], out[n + 8] = reset, delay, off, granted
end

local function judge(alg, out, op, cost, ts, tn, as, an)
  local back, bs, bn, ss, sn = alg.boundary(ts, tn)
  local offs, offn = 0, 0
  Js, Jn = ts, tn
  if back then
    Js, Jn = bs, bn
    offs, offn = psub(bs, bn, ts, tn)
    -- A boundary starts a span, unless alg.boundary also gives the
    -- start of the boundary's span.
    as, an = bs, bn
    if ss ~= nil then
      as, an = ss, sn
    end
  end
  if Ls ~= nil and not align(Js, Jn, as, an) then
    return nil
  end
  local off = rep(offs, offn)
  if op ~= 'a' then
    local _, rem0, _, _, xs, xn = alg.decide(0, false)
    if op == 'm' and not (back and clamp == 0) and rem0 >= 1 then
      -- A grant of what remains always passes.
      local g = math.min(cost, rem0)
      local ok, rem, _, _, ys, yn, ds, dn = alg.decide(g, true)
      put(out, 1, 0, rem, 0, rep(ys, yn), rep(ds, dn), off, g)
      return alg.saves(ok), padd(ys, yn, offs, offn)
    end
    if op == 'p' or back and clamp == 0 then
      -- A peek says what the request would get if taken (would); a
      -- refusal for the clock is judged without taking, as
      -- limiters' refusal for the clock is.
      local ok, _, rs, rn, _, _, ds, dn, rc = alg.decide(1, false, not (back and clamp == 0))
      local code = rc or 1
      if back and clamp == 0 then
        code = 3
        if ok then
          rs, rn = 0, 0
        end
        ok = false
      end
      if ok then
        put(out, 1, 0, rem0, 0, rep(xs, xn), rep(ds, dn), off, 0)
      else
        put(out, 0, code, rem0, rep(rs, rn), rep(xs, xn), 0, off, 0)
      end
      return false
    end
    cost = 1 -- nothing remains: judged as a request of cost 1
  end
  if cost > alg.limit then
    local _, rem, _, _, xs, xn = alg.decide(0, false)
    put(out, 0, 2, rem, -1, rep(xs, xn), 0, off, 0)
    return false
  end
  if back and clamp == 0 then
    local ok, _, rs, rn = alg.decide(cost, false)
    if ok then
      rs, rn = 0, 0
    end
    local _, rem, _, _, xs, xn = alg.decide(0, false)
    put(out, 0, 3, rem, rep(rs, rn), rep(xs, xn), 0, off, 0)
    return false
  end
  local ok, rem, rs, rn, xs, xn, ds, dn, rc = alg.decide(cost, true)
  if ok then
    put(out, 1, 0, rem, 0, rep(xs, xn), rep(ds, dn), off, cost)
  else
    put(out, 0, rc or 1, rem, rep(rs, rn), rep(xs, xn), 0, off, 0)
  end
  return alg.saves(ok), padd(xs, xn, offs, offn)
end

-- wrap, when a script sets it, builds its algorithm on another's: the
-- other script's part hands its algorithm to wrap, and runs what it
-- returns (blocking_counter.lua on sliding_counter.lua).
local wrap = nil

-- run reads the requests after the algorithm's np parameters, judges
-- them, and writes the state once: alg.save() writes it, and the key
-- expires when it is fresh again, a margin later (the latest time any
-- request's decision says). With aligned, each request carries an
-- anchor.
local function run(alg, np, aligned)
  local base = 4 + np
  local count = arg(base, 'requests', 1, 1000000)
  local width = 4
  if aligned then
    width = 6
  end
  if bad == nil and #ARGV ~= base + count * width then
    bad = 'requests'
  end
  if bad then
    return redis.error_reply('ERR redisstore: bad argument ' .. bad)
  end
  -- Every argument checked before the first request is judged.
  local q = {}
  for i = 1, count do
    local at = base + (i - 1) * width
    local op = ARGV[at + 1]
    if op ~= 'a' and op ~= 'p' and op ~= 'm' then
      bad = 'operation'
    end
    local k = (i - 1) * 6
    q[k + 1], q[k + 2] = op, arg(at + 2, 'cost', 1, MAXV)
    if clock == 'c' then
      q[k + 3], q[k + 4] = arg(at + 3, 'time', -MAXS, MAXS), arg(at + 4, 'time', 0, E9 - 1)
    else
      q[k + 3], q[k + 4] = Ts, Tn
    end
    if aligned then
      q[k + 5], q[k + 6] = arg(at + 5, 'anchor', -2 * MAXS, MAXS), arg(at + 6, 'anchor', 0, E9 - 1)
    end
  end
  if bad then
    return redis.error_reply('ERR redisstore: bad argument ' .. bad)
  end
  local out = {Ts, Tn}
  local dirty = false
  local fs, fn = 0, 0 -- how long after its own time the state is fresh
  for i = 1, count do
    local k = (i - 1) * 6
    local saved, es, en = judge(alg, out, q[k + 1], q[k + 2], q[k + 3], q[k + 4], q[k + 5], q[k + 6])
    if saved == nil then
      return redis.error_reply('ERR redisstore: time out of range: the time is more than 52 days from its anchor (the server clock from the caller\'s)')
    end
    if saved then
      dirty = true
      if plt(fs, fn, es, en) then
        fs, fn = es, en
      end
    end
  end
  if dirty then
    alg.save()
    -- Rounded up to whole ms, so that expiry never comes before.
    if fs > 0 or fn > 0 then
      if clock == 's' then
        -- From the server's reading of its clock that judged the
        -- requests: when the state is fresh again, rounded up.
        local es, en = padd(Ts, Tn, fs, fn)
        for i = 1, #KEYS do
          redis.call('PEXPIREAT', KEYS[i], es * 1000 + cdiv(en, 1000000) + margin)
        end
      else
        local ms = fs * 1000 + cdiv(fn, 1000000) + margin
        for i = 1, #KEYS do
          redis.call('PEXPIRE', KEYS[i], ms)
        end
      end
    else
      for i = 1, #KEYS do
        redis.call('DEL', KEYS[i])
      end
    end
  end
  return out
end
