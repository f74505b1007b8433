-- Sliding log (limiters.SlidingLogState). KEYS[1]: a sorted set of the
-- admitted requests, every score 0, so that the members sort as text:
-- the member of a request is its time, as 20 decimal digits of t + 2^63,
-- the running total of the cost admitted (the log's cumulative cost up to
-- and including it) as 16 digits, ':' and its cost. Members then sort by
-- time, and requests at the same time by their order, and the cost in any
-- span of the log is the difference of two running totals: a request
-- finds its window [t-W, t] with two lookups (ZRANGEBYLEX) and needs no
-- pass over the entries, whatever the limit. ARGV[4] limit, ARGV[5],
-- ARGV[6] the window W (s, n).
--
-- As in memory, entries that left the window are dropped only when a
-- request is admitted, here at most DROP of them per request: they no
-- longer count, so those left behind change no decision, and every
-- admission adds one entry and drops up to DROP, so the set never holds
-- many more than the window's entries. The key expires once its newest
-- entry has left the window. A running total near 2^52 is counted from
-- the oldest entry again (REBASE): a pass, once per 2^52 cost admitted.
local limit = arg(4, 'limit', 1, MAXV)
local Ws, Wn = arg(5, 'window', 0, MAXS), arg(6, 'window', 0, E9 - 1)
local DROP = 8
local REBASE = 4503599627370496 -- 2^52
local OS, ON = 9223372036, 854775808 -- 2^63 as (s, n)

local function enc(s, n)
  local us, un = padd(s, n, OS, ON)
  return string.format('%011d%09d', us, un)
end

-- entry parses a member: its time (s, n), running total and cost; nil
-- when it is not one.
local function entry(m)
  if type(m) ~= 'string' or #m < 38 or string.sub(m, 37, 37) ~= ':' then
    return nil
  end
  local us, un = state(string.sub(m, 1, 11), 0, 2 * MAXS), state(string.sub(m, 12, 20), 0, E9 - 1)
  local cum, c = state(string.sub(m, 21, 36), 1, MAXV), state(string.sub(m, 38), 1, MAXV)
  if us == nil or un == nil or cum == nil or c == nil or c > cum then
    return nil
  end
  local s, n = psub(us, un, OS, ON)
  return s, n, cum, c
end

local top = redis.call('ZRANGE', KEYS[1], -1, -1)
local seen, Ns, Nn, total = false, 0, 0, 0 -- the newest entry
if #top > 0 then
  local c
  Ns, Nn, total, c = entry(top[1])
  if Ns == nil then
    return corrupt(KEYS[1])
  end
  seen = true
end
local broken = false

local alg = {limit = limit}

function alg.boundary(ts, tn)
  if seen and plt(ts, tn, Ns, Nn) then
    return true, Ns, Nn
  end
  return false
end

-- window returns the cost in [t-W, t], the running total before its
-- first entry, and the members before it as a range bound ('-' for
-- none), for the time judged.
local function window()
  local cs, cn = psub(Js, Jn, Ws, Wn)
  local us, un = padd(cs, cn, OS, ON)
  local cut, first = nil, nil
  if us < 0 then
    first = redis.call('ZRANGE', KEYS[1], 0, 0) -- before every int64 time: the whole log
  else
    cut = string.format('%011d%09d', us, un)
    first = redis.call('ZRANGEBYLEX', KEYS[1], '[' .. cut, '+', 'LIMIT', 0, 1)
  end
  if #first == 0 then
    return 0, total, cut
  end
  local _, _, cum, c = entry(first[1])
  if cum == nil then
    broken = true
    return 0, total, cut
  end
  return total - (cum - c), cum - c, cut
end

-- crossing returns the time of the first entry whose running total
-- reaches want, searching the ranks from lo: a binary search, log n
-- lookups.
local function crossing(lo, want)
  local hi = redis.call('ZCARD', KEYS[1]) - 1
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    local _, _, cum = entry(redis.call('ZRANGE', KEYS[1], mid, mid)[1])
    if cum == nil then
      broken = true
      return 0, 0
    end
    if cum >= want then
      hi = mid
    else
      lo = mid + 1
    end
  end
  local s, n = entry(redis.call('ZRANGE', KEYS[1], lo, lo)[1])
  if s == nil then
    broken = true
    return 0, 0
  end
  return s, n
end

-- leaves returns how long after the time judged an entry at e leaves the
-- window: at e+W+1.
local function leaves(es, en)
  local s, n = padd(es, en, Ws, Wn)
  s, n = padd(s, n, 0, 1)
  return psub(s, n, Js, Jn)
end

local function rebase()
  local all = redis.call('ZRANGE', KEYS[1], 0, -1)
  local _, _, cum, c = entry(all[1])
  if cum == nil then
    broken = true
    return
  end
  local base = cum - c
  redis.call('DEL', KEYS[1])
  for i = 1, #all do
    local s, n, cm, cs = entry(all[i])
    if s == nil then
      broken = true
      return
    end
    redis.call('ZADD', KEYS[1], 0, enc(s, n) .. string.format('%016d', cm - base) .. ':' .. str(cs))
  end
  total = total - base
end

function alg.decide(cost, commit)
  local sum, before, cut = window()
  if cost > limit - sum then
    local xs, xn = leaves(Ns, Nn)
    local rs, rn = 0, 0
    local lo = 0
    if cut ~= nil then
      lo = redis.call('ZLEXCOUNT', KEYS[1], '-', '(' .. cut)
    end
    -- Wait until enough of the oldest entries have left the window.
    local es, en = crossing(lo, before + sum + cost - limit)
    rs, rn = leaves(es, en)
    return false, math.max(0, limit - sum), rs, rn, xs, xn, 0, 0
  end
  local xs, xn = 0, 0
  if cost > 0 then
    xs, xn = padd(Ws, Wn, 0, 1)
  elseif sum > 0 then
    xs, xn = leaves(Ns, Nn)
  end
  if commit and cost > 0 then
    if total + cost > REBASE then
      rebase()
    end
    -- Add before dropping, so that the set is never empty, hence never
    -- deleted, in between: on a cluster node whose slot is migrating, a
    -- command on a key that is gone fails, and the script with it, half
    -- done.
    total = total + cost
    redis.call('ZADD', KEYS[1], 0, enc(Js, Jn) .. string.format('%016d', total) .. ':' .. str(cost))
    Ns, Nn, seen = Js, Jn, true
    if cut ~= nil then
      local old = redis.call('ZLEXCOUNT', KEYS[1], '-', '(' .. cut)
      if old > 0 then
        redis.call('ZREMRANGEBYRANK', KEYS[1], 0, math.min(old, DROP) - 1)
      end
    end
  end
  return true, limit - sum - cost, 0, 0, xs, xn, 0, 0
end

function alg.saves(ok)
  return ok -- decide wrote the admitted entry
end

function alg.save()
end

local out = run(alg, 3, false)
if broken then
  return corrupt(KEYS[1])
end
return out
