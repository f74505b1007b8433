-- Token bucket and leaky bucket, the two faces of one meter
-- (limiters.TokenBucketState, LeakyBucketState). KEYS[1]: a hash, l the
-- time of the key's last request and v its level scaled by per, as the
-- in-memory state keeps it: level*per, so that a leak of n per ns is
-- exact. ARGV[7] capacity C, ARGV[8] n and ARGV[9] per, the rate in
-- lowest terms (n units per per ns), ARGV[10] C*per.
local C = arg(7, 'capacity', 1, MAXV)
local n = arg(8, 'rate', 1, MAXV)
local per = arg(9, 'rate', 1, MAXV)
local cper = arg(10, 'rate', 1, MAXV)
if bad == nil and C * per ~= cper then
  bad = 'rate'
end
if bad then
  return reply_bad()
end

local st = redis.call('HMGET', KEYS[1], 'l', 'v')
local seen, last, lv = false, 0, 0
if st[1] or st[2] then
  seen = true
  last = state(st[1], -MAXT, MAXT)
  lv = state(st[2], 0, cper)
  if last == nil or lv == nil then
    return corrupt(KEYS[1])
  end
end

local function boundary(now)
  if seen and now < last then
    return true, last
  end
  return false, 0
end

-- level returns the scaled level drained to now >= last.
local function level(now)
  if not seen or lv == 0 then
    return 0
  end
  local e = now - last
  if e >= cdiv(lv, n) then
    return 0
  end
  return lv - e * n -- e*n < lv here
end

local function decide(now, c, commit)
  local v = level(now)
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
    seen, last, lv = true, now, v
  end
  local rem = fdiv(cper - v, per)
  return ok, rem, retry, cdiv(v, n), 0
end

local function save(allowed)
  -- Also after a refusal: the state has moved on to now, and a request
  -- before now is from then on a backwards clock.
  redis.call('HSET', KEYS[1], 'l', str(last), 'v', str(lv))
  return true
end

return judge(C, boundary, decide, save)
