-- Sliding counter (limiters.SlidingCounterState). KEYS[1]: a hash, w the
-- index of the key's current window (aligned as fixed_window.lua aligns
-- it), p and c the cost counted in the window before and in it. ARGV[7]
-- limit L, ARGV[8] window W in ns, ARGV[9] phase. The estimate
-- p*(W-elapsed)/W + c is kept scaled by W; the store refuses policies where
-- 2*(L+1)*W could reach 2^53.
local limit = arg(7, 'limit', 1, MAXV)
local W = arg(8, 'window', 1, MAXT)
local phase = arg(9, 'phase', 0, MAXT)
if bad == nil and (phase >= W or (2 * limit + 2) * W > MAXV) then
  bad = 'window'
end
if bad then
  return reply_bad()
end

local st = redis.call('HMGET', KEYS[1], 'w', 'p', 'c')
local sw, sp, sc = 0, 0, 0
if st[1] or st[2] or st[3] then
  sw = state(st[1], -MAXV, MAXV)
  sp = state(st[2], 0, limit)
  sc = state(st[3], 0, limit)
  if sw == nil or sp == nil or sc == nil then
    return corrupt(KEYS[1])
  end
end

local function used()
  return sp ~= 0 or sc ~= 0
end

local function boundary(now)
  if not used() then
    return false, 0
  end
  local k = fdiv(now + phase, W)
  if k >= sw then
    return false, 0
  end
  return true, sw * W - phase
end

-- firstAbove returns the least e with p*(W-e) < k*W, for p >= k >= 1.
local function firstAbove(p, k)
  if p < k then
    return 0
  end
  return fdiv((p - k) * W, p) + 1
end

-- retryAfter returns how long after elapsed time m in the current window
-- the estimate first drops below k.
local function retryAfter(p, c, m, k)
  if c < k and p > 0 then
    local e = firstAbove(p, k - c)
    if e < W then
      return e - m
    end
  end
  local untilNext = W - m
  if c < k then
    return untilNext
  end
  local e = firstAbove(c, k)
  if e < W then
    return untilNext + e
  end
  return untilNext + W
end

local function decide(now, cost, commit)
  local k, m = fdiv(now + phase, W)
  local w, p, c = sw, sp, sc
  if not used() then
    w = k
  elseif k > w then
    if k - w == 1 then
      p = c
    else
      p = 0
    end
    c, w = 0, k
  end
  local est = p * (W - m) + c * W
  local below = limit - cost + 1
  local ok = est < below * W
  if ok then
    c = c + cost
    est = est + cost * W
  end
  local rem = 0
  if est < limit * W then
    rem = cdiv(limit * W - est, W)
  end
  local reset = 0
  if c > 0 then
    reset = W - m + W
  elseif p > 0 then
    reset = W - m
  end
  local retry = 0
  if not ok then
    retry = retryAfter(p, c, m, below)
  end
  if commit then
    sw, sp, sc = w, p, c
  end
  return ok, rem, retry, reset, 0
end

local function save(allowed)
  -- Also after a refusal: the windows have moved on to now's.
  redis.call('HSET', KEYS[1], 'w', str(sw), 'p', str(sp), 'c', str(sc))
  return true
end

return judge(limit, boundary, decide, save)
