-- Blocking counter (limiters.BlockingCounterState): the sliding counter
-- of sliding_counter.lua, which follows this part in the script and
-- hands its algorithm to wrap, and a block. ARGV[8], ARGV[9] the block B
-- (s, n); the hash's f and g the time (s, n) of the refusal that blocked
-- the key, h and i the start of its window (where a request before it is
-- judged from), all absent when it is not blocked. The block ends at that
-- time plus B, exclusive, or at the latest int64 time when that is
-- later. While it lasts every request is refused (reason 4, blocked; at
-- the instant of the refusal that blocked it, as that one was, reason 1)
-- and none is counted: the retry is the later of the block's end and
-- when the counter would let the request through, the reset the later
-- of the block's end and the counter's own. A refusal by the counter
-- blocks the key when it is taken; what it would get (remaining 0, retry
-- and reset at least B) is also what a peek says.
local LASTS, LASTN = 9223372036, 854775807 -- the latest int64 time
wrap = function(alg)
  local Bs, Bn = arg(8, 'block', 0, MAXS), arg(9, 'block', 0, E9 - 1)
  local st = redis.call('HMGET', KEYS[1], 'f', 'g', 'h', 'i')
  local blocked, fs, fn, hs, hn = false, 0, 0, 0, 0
  if st[1] or st[2] or st[3] or st[4] then
    fs, fn = pstate(st[1], st[2])
    hs, hn = pstate(st[3], st[4])
    if fs == nil or hs == nil then
      return nil, corrupt(KEYS[1])
    end
    blocked = true
  end
  local function untilEnd()
    local us, un = padd(fs, fn, Bs, Bn)
    if plt(LASTS, LASTN, us, un) then
      return LASTS, LASTN
    end
    return us, un
  end
  local function blockedAt(ts, tn)
    if not blocked then
      return false
    end
    return plt(ts, tn, untilEnd())
  end
  local function later(as, an, bs, bn)
    if plt(as, an, bs, bn) then
      return bs, bn
    end
    return as, an
  end

  local b = {limit = alg.limit}
  local counterBoundary, counterDecide, counterSave = alg.boundary, alg.decide, alg.save

  function b.boundary(ts, tn)
    if blocked and plt(ts, tn, fs, fn) then
      return true, fs, fn, hs, hn
    end
    return counterBoundary(ts, tn)
  end

  function b.decide(cost, commit, would)
    if blockedAt(Js, Jn) then
      local ok, _, rs, rn = counterDecide(cost, false)
      if ok then
        rs, rn = 0, 0
      end
      local _, _, _, _, xs, xn = counterDecide(0, false)
      local es, en = untilEnd()
      local ws, wn = psub(es, en, Js, Jn)
      rs, rn = later(rs, rn, ws, wn)
      xs, xn = later(xs, xn, ws, wn)
      local code = 4
      if Js == fs and Jn == fn then
        code = 1
      end
      return false, 0, rs, rn, xs, xn, 0, 0, code
    end
    if blocked and commit then
      blocked, fs, fn, hs, hn = false, 0, 0, 0, 0 -- the block is over
    end
    local ok, rem, rs, rn, xs, xn, ds, dn = counterDecide(cost, commit)
    if ok or Bs == 0 and Bn == 0 or not (commit or would) then
      return ok, rem, rs, rn, xs, xn, ds, dn
    end
    if commit then
      blocked, fs, fn, hs, hn = true, Js, Jn, W0s, W0n
    end
    rs, rn = later(rs, rn, Bs, Bn)
    xs, xn = later(xs, xn, Bs, Bn)
    return false, 0, rs, rn, xs, xn, 0, 0
  end

  b.saves = alg.saves -- the counter's: its windows move on a refusal too
  function b.save()
    counterSave()
    if blocked then
      redis.call('HSET', KEYS[1], 'f', fs, 'g', fn, 'h', hs, 'i', hn)
    else
      redis.call('HDEL', KEYS[1], 'f', 'g', 'h', 'i')
    end
  end

  return b, 6, true
end
