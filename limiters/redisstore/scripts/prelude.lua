-- The part every script of the store begins with. Redis runs Lua 5.1,
-- whose numbers are doubles: every quantity here is an integer below
-- 2^53, so every sum, difference and product is exact. The store refuses
-- at construction any policy that could take one further, and a time
-- further than 2^52-1 ns from its epoch.
--
-- ARGV[1] the time in ns since the epoch, or "" to read the server's clock
-- ARGV[2] the epoch's whole seconds and ARGV[3] its nanoseconds (for "")
-- ARGV[4] the cost, ARGV[5] 1 to clamp a backwards clock, 0 to refuse
-- ARGV[6] a margin in ms added to every expiry (Options.ExpiryMargin)
-- ARGV[7...] the algorithm's own parameters.
--
-- A script returns {allowed, reason, remaining, retry, reset, delay, off}:
-- reason 0 none, 1 the algorithm's refusal, 2 cost above the limit (retry
-- -1: never), 3 clock went backwards. retry, reset and delay count from
-- the time the request was judged at, off from the request's own time to
-- that time (nonzero only when the clock went backwards for the key).
-- Every argument is checked before the first write: a script is atomic,
-- not transactional, and an error halfway would leave half a state.

local MAXT = 4503599627370495 -- 2^52-1
local MAXV = 9007199254740991 -- 2^53-1

local bad = nil
local function arg(i, name, lo, hi)
  local v = tonumber(ARGV[i])
  if v == nil or v ~= math.floor(v) or v < lo or v > hi then
    bad = bad or name
    return 0
  end
  return v
end

local function reply_bad()
  return redis.error_reply('ERR redisstore: bad argument ' .. bad)
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

-- str writes an integer in full; Lua's own conversion keeps only 14 digits.
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

local cost = arg(4, 'cost', 1, MAXV)
local clamp = arg(5, 'clock', 0, 1)
local margin = arg(6, 'margin', 0, MAXT)
local t = 0
if ARGV[1] == '' then
  local esec = arg(2, 'epoch', -MAXV, MAXV)
  local ens = arg(3, 'epoch', 0, 999999999)
  if bad == nil then
    local now = redis.call('TIME')
    t = (tonumber(now[1]) - esec) * 1000000000 + tonumber(now[2]) * 1000 - ens
    if t < -MAXT or t > MAXT then
      return redis.error_reply('ERR redisstore: time out of range: the server clock is more than 2^52-1 ns from the epoch')
    end
  end
else
  t = arg(1, 'now', -MAXT, MAXT)
end

-- expire sets the keys to expire when the state is fresh again: reset ns
-- after the time the request was judged at, which is off ns after its own
-- time. Rounded up to whole ms, so that expiry never comes before, and
-- the margin added.
local function expire(reset, off)
  local ms = cdiv(reset, 1000000) + cdiv(off, 1000000)
  if ms > 0 then
    ms = ms + margin
  end
  for i = 1, #KEYS do
    if ms > 0 then
      redis.call('PEXPIRE', KEYS[i], str(ms))
    else
      redis.call('DEL', KEYS[i])
    end
  end
end

-- judge is the transition every algorithm shares (limiters' applyExact):
-- the cost and clock rules around the algorithm's decide. boundary(now)
-- returns whether now is earlier than the state accepts, and the earliest
-- time it does. decide(at, cost, commit) returns allowed, remaining,
-- retry, reset and delay for a request at at, and keeps the new state
-- only when commit is true. save(allowed) writes the kept state.
local function judge(limit, boundary, decide, save)
  local back, b = boundary(t)
  local at, off = t, 0
  if back then
    at, off = b, b - t
  end
  if cost > limit then
    local _, rem, _, reset = decide(at, 0, false)
    return {0, 2, rem, -1, reset, 0, off}
  end
  if back and clamp == 0 then
    local ok, _, retry = decide(at, cost, false)
    if ok then
      retry = 0
    end
    local _, rem, _, reset = decide(at, 0, false)
    return {0, 3, rem, retry, reset, 0, off}
  end
  local ok, rem, retry, reset, delay = decide(at, cost, true)
  if save(ok) then
    expire(reset, off)
  end
  if ok then
    return {1, 0, rem, 0, reset, delay, off}
  end
  return {0, 1, rem, retry, reset, 0, off}
end
