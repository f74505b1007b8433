-- Sliding counter (limiters.SlidingCounterState). KEYS[1]: a hash, a and
-- b the start (s, n) of the key's current window (aligned as
-- fixed_window.lua aligns it), p and c the cost counted in the window
-- before and in it. ARGV[4] limit L, ARGV[5], ARGV[6] the window W (s,
-- n), ARGV[7] the largest count the arithmetic takes exactly. The
-- estimate p*(W-elapsed)/W + c is compared as p*(W-elapsed) < (k-c)*W, a
-- count times a pair each: the store refuses policies where (L+1)*10^9 or
-- (L+1)*W/10^9 could reach 2^53, and reads a stored count above the
-- largest (left by a larger limit) as that: still a full window.
local limit = arg(4, 'limit', 1, MAXV)
local Ws, Wn = arg(5, 'window', 0, MAXS), arg(6, 'window', 0, E9 - 1)
local cmax = arg(7, 'counts', 1, MAXV)
if bad == nil and (Ws == 0 and Wn == 0 or limit > cmax or (cmax + 1) * E9 > MAXV or (cmax + 1) * (Ws + 1) > MAXV) then
  bad = 'window'
end
setSpan(Ws, Wn)

local st = redis.call('HMGET', KEYS[1], 'a', 'b', 'p', 'c')
local ss, sn, sp, sc = 0, 0, 0, 0
if st[1] or st[2] or st[3] or st[4] then
  ss, sn = pstate(st[1], st[2])
  sp, sc = state(st[3], 0, MAXV), state(st[4], 0, MAXV)
  if ss == nil or sp == nil or sc == nil then
    return corrupt(KEYS[1])
  end
  sp, sc = math.min(sp, cmax), math.min(sc, cmax)
end

local function used()
  return sp ~= 0 or sc ~= 0
end

local alg = {limit = limit}

function alg.boundary(ts, tn)
  if used() and plt(ts, tn, ss, sn) then
    return true, ss, sn
  end
  return false
end

-- ratio returns floor((s, n)/W) and the remainder, for a quotient of at
-- most cmax+1: the double quotient, corrected.
local function ratio(s, n)
  local q = math.floor((s * E9 + n) / (Ws * E9 + Wn))
  if q < 0 then
    q = 0
  end
  local rs, rn = psub(s, n, pmul(q, Ws, Wn))
  while rs < 0 do
    q = q - 1
    rs, rn = padd(rs, rn, Ws, Wn)
  end
  while not plt(rs, rn, Ws, Wn) do
    q = q + 1
    rs, rn = psub(rs, rn, Ws, Wn)
  end
  return q
end

-- firstAbove returns the least e with p*(W-e) < k*W, for p >= k >= 1:
-- floor((p-k)*W/p) + 1.
local function firstAbove(p, k)
  if p < k then
    return 0, 0
  end
  local s, n = pmul(p - k, Ws, Wn)
  s, n = pdiv(s, n, p)
  return padd(s, n, 0, 1)
end

-- retryAfter returns how long after elapsed time M in the current window
-- the estimate first drops below k.
local function retryAfter(p, c, k)
  if c < k and p > 0 then
    local es, en = firstAbove(p, k - c)
    if plt(es, en, Ws, Wn) then
      return psub(es, en, Ms, Mn)
    end
  end
  local us, un = psub(Ws, Wn, Ms, Mn)
  if c < k then
    return us, un
  end
  local es, en = firstAbove(c, k)
  if plt(es, en, Ws, Wn) then
    return padd(us, un, es, en)
  end
  return padd(us, un, Ws, Wn)
end

function alg.decide(cost, commit)
  local p, c = sp, sc
  if used() and plt(ss, sn, W0s, W0n) then
    -- A later window: the stored one is the one before it, or older.
    local es, en = padd(ss, sn, Ws, Wn)
    if plt(es, en, W0s, W0n) then
      p = 0
    else
      p = c
    end
    c = 0
  end
  local us, un = psub(Ws, Wn, Ms, Mn)
  local es, en = pmul(p, us, un) -- the previous window's part, scaled by W
  local k = limit - cost + 1
  local ok = false
  if k > c then
    ok = plt(es, en, pmul(k - c, Ws, Wn))
  end
  if ok then
    c = c + cost
  end
  local rem = math.max(0, limit - c - ratio(es, en))
  local xs, xn = 0, 0
  if c > 0 then
    xs, xn = padd(us, un, Ws, Wn)
  elseif p > 0 then
    xs, xn = us, un
  end
  local rs, rn = 0, 0
  if not ok then
    rs, rn = retryAfter(p, c, k)
  end
  if commit then
    ss, sn, sp, sc = W0s, W0n, p, c
  end
  return ok, rem, rs, rn, xs, xn, 0, 0
end

function alg.saves()
  return true -- also after a refusal: the windows have moved on
end

function alg.save()
  redis.call('HSET', KEYS[1], 'a', ss, 'b', sn, 'p', sp, 'c', sc)
end

if wrap then
  -- blocking_counter.lua's algorithm on this one, or its error reply.
  local b, np, aligned = wrap(alg)
  if b == nil then
    return np
  end
  return run(b, np, aligned)
end
return run(alg, 4, true)
