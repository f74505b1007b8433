-- Token bucket and leaky bucket, the two faces of one meter
-- (limiters.TokenBucketState, LeakyBucketState). KEYS[1]: a hash, a and
-- b the time (s, n) of the key's last request, v its level scaled by per
-- and r that per, as the in-memory state keeps it: level*per, so that a
-- leak of n per ns is exact. ARGV[4] capacity C, ARGV[5] n and ARGV[6]
-- per, the rate in lowest terms (n units per per ns), ARGV[7] C*per. A
-- level kept at another scale (the rate changed) is rescaled, rounded up;
-- one above the capacity (it was larger) reads as a full bucket.
local C = arg(4, 'capacity', 1, MAXV)
local n = arg(5, 'rate', 1, MAXV)
local per = arg(6, 'rate', 1, MAXV)
local cper = arg(7, 'rate', 1, MAXV)
if bad == nil and C * per ~= cper then
  bad = 'rate'
end

local st = redis.call('HMGET', KEYS[1], 'a', 'b', 'v', 'r')
local seen, ls, ln, lv = false, 0, 0, 0
if st[1] or st[2] or st[3] or st[4] then
  seen = true
  ls, ln = pstate(st[1], st[2])
  lv = state(st[3], 0, MAXV)
  local r = state(st[4], 1, MAXV)
  if ls == nil or lv == nil or r == nil then
    return corrupt(KEYS[1])
  end
  if r ~= per then
    lv = math.ceil(lv / r * per)
  end
  lv = math.min(lv, cper)
end

local alg = {limit = C}

function alg.boundary(ts, tn)
  if seen and plt(ts, tn, ls, ln) then
    return true, ls, ln
  end
  return false
end

-- level returns the scaled level drained to the time judged, at or after
-- the last.
local function level()
  if not seen or lv == 0 then
    return 0
  end
  local e = plain(psub(Js, Jn, ls, ln))
  if e == nil or e >= cdiv(lv, n) then
    return 0
  end
  return lv - e * n -- e*n < lv here
end

function alg.decide(c, commit)
  local v = level()
  -- (level+c)*per <= C*per, without forming the sum.
  local room = (C - c) * per
  local ok = v <= room
  local retry = 0
  if ok then
    v = v + c * per
  else
    retry = cdiv(v - room, n)
  end
  if commit then
    seen, ls, ln, lv = true, Js, Jn, v
  end
  local rs, rn = norm(0, retry)
  local xs, xn = norm(0, cdiv(v, n))
  return ok, fdiv(cper - v, per), rs, rn, xs, xn, 0, 0
end

function alg.saves()
  -- Also after a refusal: the state has moved on to the time judged, and
  -- a request before it is from then on a backwards clock.
  return true
end

function alg.save()
  redis.call('HSET', KEYS[1], 'a', ls, 'b', ln, 'v', lv, 'r', per)
end

return run(alg, 4, false)
