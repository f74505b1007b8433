-- Fixed window (limiters.FixedWindowState) and, with hits, the fixed
-- window that counts refused hits too (FixedWindowHitsState). KEYS[1]: a
-- hash, a and b the start (s, n) of the key's window [start, start+W) and
-- c the cost (or hits) counted in it. ARGV[4] limit, ARGV[5], ARGV[6] the
-- window W (s, n), ARGV[7] 1 to count every hit. Windows are aligned as
-- the in-memory limiter's are, at multiples of W on the request's clock:
-- each request's anchor is the start of its window. A count above the
-- limit (left by a larger one) reads as a full window.
local limit = arg(4, 'limit', 1, MAXV)
local Ws, Wn = arg(5, 'window', 0, MAXS), arg(6, 'window', 0, E9 - 1)
local hits = arg(7, 'hits', 0, 1)
if bad == nil and Ws == 0 and Wn == 0 then
  bad = 'window'
end
setSpan(Ws, Wn)

local st = redis.call('HMGET', KEYS[1], 'a', 'b', 'c')
local ss, sn, sc = 0, 0, 0
if st[1] or st[2] or st[3] then
  ss, sn = pstate(st[1], st[2])
  sc = state(st[3], 1, MAXV)
  if ss == nil or sc == nil then
    return corrupt(KEYS[1])
  end
end

local alg = {limit = limit}

function alg.boundary(ts, tn)
  if sc > 0 and plt(ts, tn, ss, sn) then
    return true, ss, sn
  end
  return false
end

function alg.decide(cost, commit)
  local n = sc
  if n == 0 or plt(ss, sn, W0s, W0n) then
    n = 0 -- the window of the time judged is a later one
  end
  local us, un = psub(Ws, Wn, Ms, Mn) -- until the next window
  local ok = cost <= limit - n
  -- Every hit counts, allowed or not: once taken (commit).
  if ok and hits == 0 or hits == 1 and commit then
    n = math.min(n + cost, MAXV)
  end
  if commit and (ok or hits == 1) then
    ss, sn, sc = W0s, W0n, n
  end
  local rem = math.max(0, limit - n)
  local xs, xn = 0, 0
  if n > 0 then
    xs, xn = us, un
  end
  if ok then
    return true, rem, 0, 0, xs, xn, 0, 0
  end
  return false, rem, us, un, xs, xn, 0, 0
end

function alg.saves(ok)
  return ok or hits == 1 -- a plain refusal leaves the window as it was
end

function alg.save()
  redis.call('HSET', KEYS[1], 'a', ss, 'b', sn, 'c', sc)
end

return run(alg, 4, true)
