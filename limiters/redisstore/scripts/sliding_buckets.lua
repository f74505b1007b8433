-- Sliding buckets (limiters.SlidingBucketsState). KEYS[1]: a hash with a
-- field for each non-empty sub-window, its index (aligned as
-- fixed_window.lua aligns windows) and the cost counted in it. ARGV[7]
-- limit, ARGV[8] sub-window length S in ns, ARGV[9] buckets B, ARGV[10]
-- phase: the epoch modulo S. As in memory, sub-windows that left the span
-- are dropped only when a request is admitted.
local limit = arg(7, 'limit', 1, MAXV)
local S = arg(8, 'window', 1, MAXT)
local B = arg(9, 'buckets', 1, MAXT)
local phase = arg(10, 'phase', 0, MAXT)
if bad == nil and (phase >= S or B * S > MAXT) then
  bad = 'buckets'
end
if bad then
  return reply_bad()
end

local flat = redis.call('HGETALL', KEYS[1])
local log = {}
local total = 0
for i = 1, #flat, 2 do
  local k = state(flat[i], -MAXT, MAXT)
  local c = state(flat[i + 1], 1, limit)
  if k == nil or c == nil then
    return corrupt(KEYS[1])
  end
  log[#log + 1] = {k, c}
  total = total + c
end
-- Every admission drops the sub-windows outside its span, which holds
-- at most the limit.
if total > limit then
  return corrupt(KEYS[1])
end
table.sort(log, function(a, b) return a[1] < b[1] end)
local newest = nil
if #log > 0 then
  newest = log[#log][1]
end

local function boundary(now)
  if newest == nil then
    return false, 0
  end
  local k = fdiv(now + phase, S)
  if k < newest then
    return true, newest * S - phase
  end
  return false, 0
end

local function decide(now, cost, commit)
  local k, m = fdiv(now + phase, S)
  -- The span of sub-window k: the B sub-windows ending with it.
  local head, sum = 1, total
  while head <= #log and k - log[head][1] >= B do
    sum = sum - log[head][2]
    head = head + 1
  end
  -- leave returns how long after now sub-window e leaves the span.
  local function leave(e)
    return (B - (k - e)) * S - m
  end
  if cost > limit - sum then
    local need = sum + cost - limit
    local retry = 0
    for i = head, #log do
      need = need - log[i][2]
      if need <= 0 then
        retry = leave(log[i][1])
        break
      end
    end
    return false, limit - sum, retry, leave(newest), 0
  end
  local reset = 0
  if cost > 0 then
    reset = leave(k)
  elseif head <= #log then
    reset = leave(newest)
  end
  if commit and cost > 0 then
    -- Set before deleting, so that the hash is never empty, hence never
    -- deleted, in between: on a cluster node whose slot is migrating, a
    -- command on a key that is gone fails, and the script with it, half
    -- done. Sub-window k is not among those that left.
    local c = cost
    if newest == k then
      c = c + log[#log][2]
    end
    redis.call('HSET', KEYS[1], str(k), str(c))
    for i = 1, head - 1 do
      redis.call('HDEL', KEYS[1], str(log[i][1]))
    end
  end
  return true, limit - sum - cost, 0, reset, 0
end

local function save(allowed)
  return allowed -- decide wrote the admitted cost
end

return judge(limit, boundary, decide, save)
