-- The leaky queue in whole ticks and parts of a request
-- (limiters.TickQueueState, nginx limit_req's arithmetic). KEYS[1]: a
-- hash, a and b the start (s, n) of the tick of the last admitted
-- request, l the queue in parts, q the parts it was counted in. ARGV[4]
-- capacity, ARGV[5] parts, ARGV[6] capacity*parts, ARGV[7] the delay
-- threshold in parts, ARGV[8] A and ARGV[9] B, the drain per tick A/B
-- parts in lowest terms, ARGV[10], ARGV[11] the tick (s, n). The store
-- refuses policies whose full queue takes 2^52 ns or more to drain, or
-- whose capacity*parts*B or drain per tick passes 2^53: every quantity
-- here is then a plain number. A queue counted in other parts (the
-- policy changed) is rescaled, rounded up; one above the capacity reads
-- as full.
local C = arg(4, 'capacity', 1, MAXV)
local parts = arg(5, 'parts', 1, MAXV)
local cap = arg(6, 'parts', 1, MAXV)
local delayParts = arg(7, 'delay', 0, MAXV)
local A = arg(8, 'rate', 1, MAXV)
local Bd = arg(9, 'rate', 1, MAXV)
local Ks, Kn = arg(10, 'tick', 0, PLAIN), arg(11, 'tick', 0, E9 - 1)
local tick = plain(Ks, Kn)
if bad == nil and (C * parts ~= cap or tick == 0 or cap * Bd + A > MAXV) then
  bad = 'tick'
end
setSpan(Ks, Kn)

local st = redis.call('HMGET', KEYS[1], 'a', 'b', 'l', 'q')
local seen, ls, ln, lv = false, 0, 0, 0
if st[1] or st[2] or st[3] or st[4] then
  seen = true
  ls, ln = pstate(st[1], st[2])
  lv = state(st[3], 0, MAXV)
  local q = state(st[4], 1, MAXV)
  if ls == nil or lv == nil or q == nil then
    return corrupt(KEYS[1])
  end
  if q ~= parts then
    lv = math.ceil(lv / q * parts)
  end
  lv = math.min(lv, cap)
end

local alg = {limit = C}

function alg.boundary(ts, tn)
  if seen and plt(ts, tn, ls, ln) then
    return true, ls, ln
  end
  return false
end

-- ticks returns the whole ticks from the tick starting at (s, n) to the
-- one judged, or MAXV when they do not fit a plain number.
local function ticks(s, n)
  local d = plain(psub(W0s, W0n, s, n))
  if d == nil then
    return MAXV
  end
  return math.max(0, (fdiv(d, tick)))
end

-- toDrain returns the fewest whole ticks that drain x parts.
local function toDrain(x)
  return cdiv(x * Bd, A)
end

-- ahead returns the queue ahead of a request in the tick judged.
local function ahead()
  if not seen or lv == 0 then
    return 0
  end
  local e = ticks(ls, ln)
  if e >= toDrain(lv) then
    return 0
  end
  return lv - fdiv(e * A, Bd)
end

-- untilTick returns how long after the time judged the tick e ticks
-- after the one starting at (s, n) begins, or 0 when it has.
local function untilTick(s, n, e)
  local passed = ticks(s, n)
  if e <= passed then
    return 0, 0
  end
  return norm(0, (e - passed) * tick - plain(Ms, Mn))
end

function alg.decide(cost, commit)
  local a = ahead()
  local need = cost * parts
  local ok = a <= cap - need
  local s0, n0, l0 = ls, ln, lv -- the state as it stands
  if ok and commit then
    seen, ls, ln, lv = true, W0s, W0n, a + need
  end
  local level = a
  local ds, dn, rs, rn, xs, xn = 0, 0, 0, 0, 0, 0
  if ok then
    level = a + need
    if a > delayParts then
      ds, dn = norm(0, fdiv((a - delayParts) * Bd, A) * tick)
    end
  else
    -- The state is unchanged: wait for the tick at which the queue
    -- ahead has drained to cap - need.
    rs, rn = untilTick(s0, n0, toDrain(l0 - (cap - need)))
  end
  -- Fresh again once the queue has drained, counted from the state's
  -- own tick.
  if seen and lv > 0 then
    xs, xn = untilTick(ls, ln, toDrain(lv))
  end
  return ok, fdiv(cap - level, parts), rs, rn, xs, xn, ds, dn
end

function alg.saves(ok)
  return ok -- a refusal changes nothing, not even the time
end

function alg.save()
  redis.call('HSET', KEYS[1], 'a', ls, 'b', ln, 'l', lv, 'q', parts)
end

return run(alg, 8, true)
