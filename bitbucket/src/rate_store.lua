-- bb's rate budget of one Bitbucket identity, kept in Valkey or Redis and shared by every replica of bb:
-- one atomic step per call, the same arithmetic as client/rate.rs's Bucket.
-- KEYS[1]  the identity's bucket, a hash: t (tokens, below zero after a large batch or a 429), at (ms of the
--          last refill), p (ms until which Bitbucket's Retry-After pauses the identity).
-- ARGV     op (take, batch, give or pause), capacity, refill per second, n (tokens; for a pause, its ms),
--          now in ms ("" for the server's clock, so replicas' clocks never disagree), and the tokens of a
--          bucket the store does not hold ("" for a full one).
-- Returns  0 (taken, done) or the milliseconds until there is room.
local op, cap, rate, n = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local now = tonumber(ARGV[5])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local s = redis.call('HMGET', KEYS[1], 't', 'at', 'p')
local tokens = tonumber(s[1]) or tonumber(ARGV[6]) or cap
local at = tonumber(s[2]) or now
local paused = tonumber(s[3]) or 0
if now > at then
  tokens = math.min(cap, tokens + (now - at) * rate / 1000)
  at = now
end
local wait = 0
if op == 'take' then
  -- one of the model's requests: a token if there is one and no pause
  if paused > now then
    wait = paused - now
  elseif tokens >= n then
    tokens = tokens - n
  else
    wait = math.ceil((n - tokens) * 1000 / rate)
  end
elseif op == 'batch' then
  -- a refresh's batch of n reads: whole from the upper half, or held back. A batch larger than the upper
  -- half goes when the bucket is full and dips below the half by its excess.
  if paused > now then
    wait = paused - now
  else
    local floor = cap / 2
    local need = math.min(n, cap - floor)
    if tokens - need >= floor then
      tokens = tokens - n
    else
      wait = math.max(1, math.ceil((floor + need - tokens) * 1000 / rate))
    end
  end
elseif op == 'give' then
  tokens = math.min(cap, tokens + n)
elseif op == 'pause' then
  -- Bitbucket answered 429: the bucket is spent and nothing goes before the pause ends
  tokens = math.min(tokens, 0)
  paused = math.max(paused, now + n)
else
  return redis.error_reply('bb rate store: unknown step ' .. tostring(op))
end
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'at', tostring(at), 'p', tostring(paused))
-- Forgotten once full again and unpaused: a full bucket is what an absent key means.
redis.call('PEXPIRE', KEYS[1], math.ceil((cap - tokens) * 1000 / rate) + math.max(0, paused - now) + 1000)
return wait
