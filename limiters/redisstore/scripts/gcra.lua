-- GCRA and the leaky queue (limiters.GCRAState, LeakyQueueState): one
-- time debt, TAT - last. KEYS[1]: a hash, l the time of the key's last
-- request and d the debt in 1/n ns, as the in-memory state keeps it as
-- whole ns plus a fraction in 1/n ns. ARGV[7] capacity C, ARGV[8] n and
-- ARGV[9] per, the rate in lowest terms, ARGV[10] C*per, ARGV[11] 1 when
-- admitted requests are delayed (the queue), 0 for GCRA.
local C = arg(7, 'capacity', 1, MAXV)
local n = arg(8, 'rate', 1, MAXV)
local per = arg(9, 'rate', 1, MAXV)
local cper = arg(10, 'rate', 1, MAXV)
local delays = arg(11, 'delays', 0, 1)
if bad == nil and C * per ~= cper then
  bad = 'rate'
end
if bad then
  return reply_bad()
end

local st = redis.call('HMGET', KEYS[1], 'l', 'd')
local seen, last, debt = false, 0, 0
if st[1] or st[2] then
  seen = true
  last = state(st[1], -MAXT, MAXT)
  debt = state(st[2], 0, cper)
  if last == nil or debt == nil then
    return corrupt(KEYS[1])
  end
end

local function boundary(now)
  if seen and now < last then
    return true, last
  end
  return false, 0
end

-- owed returns the debt brought forward to now >= last: TAT = max(TAT, now).
local function owed(now)
  if not seen then
    return 0
  end
  local e = now - last
  if e > fdiv(debt, n) then
    return 0
  end
  return debt - e * n
end

local function decide(now, c, commit)
  local v = owed(now)
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
    seen, last, debt = true, now, v
  end
  return ok, C - cdiv(v, per), retry, cdiv(v, n), delay
end

local function save(allowed)
  -- Also after a refusal, as the bucket does.
  redis.call('HSET', KEYS[1], 'l', str(last), 'd', str(debt))
  return true
end

return judge(C, boundary, decide, save)
