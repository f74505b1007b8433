-- Sliding log (limiters.SlidingLogState). KEYS[1]: a sorted set of the
-- admitted requests, score the time, member "seq:cost" with seq from a
-- per-key counter, so that requests at the same time stay apart. KEYS[2]:
-- a hash, s the total cost in the set and q the counter. ARGV[7] limit,
-- ARGV[8] window W in ns. As in memory, entries that left the window are
-- dropped only when a request is admitted.
local limit = arg(7, 'limit', 1, MAXV)
local W = arg(8, 'window', 1, MAXT)
if bad then
  return reply_bad()
end

local meta = redis.call('HMGET', KEYS[2], 's', 'q')
local sum, seq = 0, 0
if meta[1] or meta[2] then
  sum = state(meta[1], 1, limit)
  seq = state(meta[2], 1, MAXV - 1)
  if sum == nil or seq == nil then
    return corrupt(KEYS[2])
  end
end
local newest = nil
if sum > 0 then
  local top = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  newest = state(top[2], -MAXT, MAXT)
  if newest == nil then
    return corrupt(KEYS[1])
  end
end

local function entryCost(member)
  return state(string.match(member, ':(%d+)$'), 1, limit)
end

local function boundary(now)
  if newest ~= nil and now < newest then
    return true, newest
  end
  return false, 0
end

-- inside returns the cost of the entries in [now-W, now] and the number of
-- entries before it, or nil for a corrupt entry.
local function inside(now)
  local old = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. str(now - W))
  local s = sum
  for i = 1, #old do
    local c = entryCost(old[i])
    if c == nil then
      return nil
    end
    s = s - c
  end
  return s, #old
end

local broken = false

local function decide(now, c, commit)
  local s, expired = inside(now)
  if s == nil then
    broken = true
    return false, 0, 0, 0, 0
  end
  if c > limit - s then
    -- Wait until enough of the oldest entries have left the window: an
    -- entry at e leaves it at e+W+1.
    local need = s + c - limit
    local retry = 0
    local first = redis.call('ZRANGEBYSCORE', KEYS[1], str(now - W), '+inf', 'WITHSCORES', 'LIMIT', 0, str(need))
    for i = 1, #first, 2 do
      local ec = entryCost(first[i])
      local et = state(first[i + 1], -MAXT, MAXT)
      if ec == nil or et == nil then
        broken = true
        return false, 0, 0, 0, 0
      end
      need = need - ec
      if need <= 0 then
        retry = W + 1 - (now - et)
        break
      end
    end
    return false, limit - s, retry, W + 1 - (now - newest), 0
  end
  local reset = 0
  if c > 0 then
    reset = W + 1
  elseif newest ~= nil and now - newest <= W then
    reset = W + 1 - (now - newest)
  end
  if commit and c > 0 then
    -- Add before removing, so that the set is never empty, hence never
    -- deleted, in between: on a cluster node whose slot is migrating, a
    -- command on a key that is gone fails, and the script with it, half
    -- done.
    seq = seq + 1
    redis.call('ZADD', KEYS[1], str(now), str(seq) .. ':' .. str(c))
    if expired > 0 then
      redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. str(now - W))
    end
    redis.call('HSET', KEYS[2], 's', str(s + c), 'q', str(seq))
  end
  return true, limit - s - c, 0, reset, 0
end

local function save(allowed)
  return allowed -- decide wrote the admitted entry
end

local out = judge(limit, boundary, decide, save)
if broken then
  return corrupt(KEYS[1])
end
return out
