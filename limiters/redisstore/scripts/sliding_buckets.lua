-- Sliding buckets (limiters.SlidingBucketsState). KEYS[1]: a hash with a
-- field for each non-empty sub-window, its start "s:n" (aligned as
-- fixed_window.lua aligns windows) and the cost counted in it. ARGV[4]
-- limit, ARGV[5], ARGV[6] the sub-window length S (s, n), ARGV[7] the
-- buckets B, ARGV[8], ARGV[9] the window W = B*S. As in memory,
-- sub-windows that left the span are dropped only when a request is
-- admitted; a request reads every field, so the store refuses more than
-- MAXB buckets. A total above the limit (left by a larger one) reads as
-- full.
local MAXB = 4096
local limit = arg(4, 'limit', 1, MAXV)
local Ss, Sn = arg(5, 'window', 0, MAXS), arg(6, 'window', 0, E9 - 1)
local B = arg(7, 'buckets', 1, MAXB)
local Ws, Wn = arg(8, 'window', 0, MAXS), arg(9, 'window', 0, E9 - 1)
if bad == nil and Ss == 0 and Sn == 0 then
  bad = 'window'
end
setSpan(Ss, Sn)

local flat = redis.call('HGETALL', KEYS[1])
if #flat > 4 * MAXB then
  return corrupt(KEYS[1])
end
local log = {}
local total = 0
-- Each count is read as at most cap, so that any sum of them is exact.
local cap = math.floor(MAXV / (#flat / 2 + 1))
for i = 1, #flat, 2 do
  local fs, fn = string.match(flat[i], '^(-?%d+):(%d+)$')
  local s, n = pstate(fs, fn)
  local c = state(flat[i + 1], 1, MAXV)
  if s == nil or c == nil then
    return corrupt(KEYS[1])
  end
  c = math.min(c, cap)
  log[#log + 1] = {s, n, c}
  total = total + c
end
table.sort(log, function(a, b) return plt(a[1], a[2], b[1], b[2]) end)

local alg = {limit = limit}

function alg.boundary(ts, tn)
  if #log > 0 then
    local e = log[#log]
    if plt(ts, tn, e[1], e[2]) then
      return true, e[1], e[2]
    end
  end
  return false
end

-- leaves returns how long after the time judged sub-window e leaves the
-- span: at e + W.
local function leaves(e)
  local s, n = padd(e[1], e[2], Ws, Wn)
  return psub(s, n, Js, Jn)
end

local function field(s, n)
  return str(s) .. ':' .. str(n)
end

function alg.decide(cost, commit)
  -- The span of the sub-window judged: the B sub-windows ending with it.
  local head, sum = 1, total
  while head <= #log do
    local ds, dn = psub(W0s, W0n, log[head][1], log[head][2])
    if plt(ds, dn, Ws, Wn) then
      break
    end
    sum = sum - log[head][3]
    head = head + 1
  end
  if cost > limit - sum then
    local need = sum + cost - limit
    local rs, rn = 0, 0
    for i = head, #log do
      need = need - log[i][3]
      if need <= 0 then
        rs, rn = leaves(log[i])
        break
      end
    end
    local xs, xn = leaves(log[#log])
    return false, math.max(0, limit - sum), rs, rn, xs, xn, 0, 0
  end
  local xs, xn = 0, 0
  if cost > 0 then
    xs, xn = psub(Ws, Wn, Ms, Mn)
  elseif head <= #log then
    xs, xn = leaves(log[#log])
  end
  if commit and cost > 0 then
    -- Set before deleting, so that the hash is never empty, hence never
    -- deleted, in between: on a cluster node whose slot is migrating, a
    -- command on a key that is gone fails, and the script with it, half
    -- done. Sub-window W0 is not among those that left.
    local newest = log[#log]
    if newest ~= nil and newest[1] == W0s and newest[2] == W0n then
      newest[3] = newest[3] + cost
    else
      newest = {W0s, W0n, cost}
      log[#log + 1] = newest
    end
    total = total + cost
    redis.call('HSET', KEYS[1], field(W0s, W0n), str(newest[3]))
    for i = 1, head - 1 do
      redis.call('HDEL', KEYS[1], field(log[1][1], log[1][2]))
      total = total - log[1][3]
      table.remove(log, 1)
    end
  end
  return true, limit - sum - cost, 0, 0, xs, xn, 0, 0
end

function alg.saves(ok)
  return ok -- decide wrote the admitted cost
end

function alg.save()
end

return run(alg, 6, true)
