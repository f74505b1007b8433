-- GCRA and the leaky queue (limiters.GCRAState, LeakyQueueState): one
-- time debt, TAT - last. KEYS[1]: a hash, a and b the time (s, n) of the
-- key's last request, d the debt in 1/n ns, as the in-memory state keeps
-- it as whole ns plus a fraction in 1/n ns, and r that n. ARGV[4]
-- capacity C, ARGV[5] n and ARGV[6] per, the rate in lowest terms,
-- ARGV[7] C*per, ARGV[8] 1 when admitted requests are delayed (the
-- queue), 0 for GCRA. A debt kept at another scale (the rate changed) is
-- rescaled, rounded up; one above the capacity's reads as full.
local C = arg(4, 'capacity', 1, MAXV)
local n = arg(5, 'rate', 1, MAXV)
local per = arg(6, 'rate', 1, MAXV)
local cper = arg(7, 'rate', 1, MAXV)
local delays = arg(8, 'delays', 0, 1)
if bad == nil and C * per ~= cper then
  bad = 'rate'
end

local st = redis.call('HMGET', KEYS[1], 'a', 'b', 'd', 'r')
local seen, ls, ln, debt = false, 0, 0, 0
if st[1] or st[2] or st[3] or st[4] then
  seen = true
  ls, ln = pstate(st[1], st[2])
  debt = state(st[3], 0, MAXV)
  local r = state(st[4], 1, MAXV)
  if ls == nil or debt == nil or r == nil then
    return corrupt(KEYS[1])
  end
  if r ~= n then
    debt = math.ceil(debt / r * n)
  end
  debt = math.min(debt, cper)
end

local alg = {limit = C}

function alg.boundary(ts, tn)
  if seen and plt(ts, tn, ls, ln) then
    return true, ls, ln
  end
  return false
end

-- owed returns the debt brought forward to the time judged, at or after
-- the last: TAT = max(TAT, now).
local function owed()
  if not seen then
    return 0
  end
  local e = plain(psub(Js, Jn, ls, ln))
  if e == nil or e > fdiv(debt, n) then
    return 0
  end
  return debt - e * n
end

function alg.decide(c, commit)
  local v = owed()
  -- Allowed when the debt is at most (C-c) emission intervals.
  local room = (C - c) * per
  local ok = v <= room
  local retry, delay = 0, 0
  if ok then
    if delays == 1 then
      delay = cdiv(v, n)
    end
    v = v + c * per
  else
    retry = cdiv(v - room, n)
  end
  if commit then
    seen, ls, ln, debt = true, Js, Jn, v
  end
  local rs, rn = norm(0, retry)
  local xs, xn = norm(0, cdiv(v, n))
  local ds, dn = norm(0, delay)
  return ok, C - cdiv(v, per), rs, rn, xs, xn, ds, dn
end

function alg.saves()
  return true -- also after a refusal, as the bucket does
end

function alg.save()
  redis.call('HSET', KEYS[1], 'a', ls, 'b', ln, 'd', debt, 'r', n)
end

return run(alg, 5, false)
