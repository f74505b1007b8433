-- Fixed window (limiters.FixedWindowState). KEYS[1]: a hash, w the index
-- of the key's window [w*W-phase, (w+1)*W-phase) on the epoch's clock and
-- c the cost counted in it. ARGV[7] limit, ARGV[8] window W in ns,
-- ARGV[9] phase: the epoch modulo W, so that windows align as the
-- in-memory limiter's do on the caller's clock.
local limit = arg(7, 'limit', 1, MAXV)
local W = arg(8, 'window', 1, MAXT)
local phase = arg(9, 'phase', 0, MAXT)
if bad == nil and phase >= W then
  bad = 'phase'
end
if bad then
  return reply_bad()
end

local st = redis.call('HMGET', KEYS[1], 'w', 'c')
local sw, sc = 0, 0
if st[1] or st[2] then
  sw = state(st[1], -MAXV, MAXV)
  sc = state(st[2], 1, limit)
  if sw == nil or sc == nil then
    return corrupt(KEYS[1])
  end
end

local function boundary(now)
  if sc == 0 then
    return false, 0
  end
  local k = fdiv(now + phase, W)
  if k >= sw then
    return false, 0
  end
  return true, sw * W - phase
end

local function decide(now, c, commit)
  local k, m = fdiv(now + phase, W)
  local w, n = sw, sc
  if n == 0 or k > w then
    w, n = k, 0
  end
  if c > limit - n then
    return false, limit - n, W - m, W - m, 0
  end
  n = n + c
  if commit then
    sw, sc = w, n
  end
  local reset = 0
  if n > 0 then
    reset = W - m
  end
  return true, limit - n, 0, reset, 0
end

local function save(allowed)
  if not allowed then
    return false -- a refusal leaves the window as it was
  end
  redis.call('HSET', KEYS[1], 'w', str(sw), 'c', str(sc))
  return true
end

return judge(limit, boundary, decide, save)
