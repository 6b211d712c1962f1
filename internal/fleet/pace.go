package fleet

import "github.com/redis/go-redis/v9"

// The politeness scripts keep one hash per politeness.Key, on the store's
// clock in microseconds (TIME), with the fields of
// politeness.LocalScheduler's record:
//
//	f  no slot before: the last granted slot plus its delay
//	s  no start before: the last recorded start plus its delay
//	p  no start before: the end of the back-off pause
//	k  the back-off streak (429s without Retry-After since a success)
//	h  the end of the lease of the claim held, 0 when none
//	c  the last claim's id (decimal)
//
// Each call is one script, so each is atomic for its key (the contract of
// politeness.Scheduler). Every write sets the key's TTL to when it becomes
// idle (max of f, s, p, h; plus max_backoff while k > 0) plus a second, so
// idle keys disappear as LocalScheduler sweeps them. ARGV durations are
// microseconds.

// paceLib is the prelude of every politeness script: it reads the clock
// and the key's record. A field that is present but not an integer in
// range (f, s, p and h in [0, now + 1 day], k in [0, 20]; what the scripts
// write stays within them while politeness.max_wait and
// politeness.max_crawl_delay are under a day) makes the script answer an
// error: the replica uses its local state for the call, as for any error
// reply, and never reads the value as "no constraint". Nothing is
// written then; the key expires with its TTL. A claim id c is compared as
// it is, and answered as an error when longer than 20 octets.
const paceLib = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local r = redis.call('HMGET', KEYS[1], 'f', 's', 'p', 'k', 'h', 'c')
local exists = r[1] or r[2] or r[3] or r[4] or r[5] or r[6]
local day = now + 86400000000
local names, highs = {'f', 's', 'p', 'k', 'h'}, {day, day, day, 20, day}
if r[6] and string.len(r[6]) > 20 then
  return redis.error_reply('ERR robotsproxy politeness state ' .. KEYS[1] .. ': field c is longer than 20 octets')
end
for i = 1, 5 do
  if r[i] then
    local n = tonumber(r[i])
    if not (n and n >= 0 and n <= highs[i] and n == math.floor(n)) then
      return redis.error_reply('ERR robotsproxy politeness state ' .. KEYS[1] .. ': field ' .. names[i] ..
        ' is not an integer in [0, ' .. string.format('%.0f', highs[i]) .. ']: ' .. string.format('%q', string.sub(r[i], 1, 40)))
    end
    r[i] = n
  else
    r[i] = 0
  end
end
local f, s, p, k, h, c = r[1], r[2], r[3], r[4], r[5], r[6] or ''
local function save(maxBackoff)
  redis.call('HSET', KEYS[1], 'f', f, 's', s, 'p', p, 'k', k, 'h', h, 'c', c)
  local e = math.max(f, s, p, h)
  if k > 0 then e = e + maxBackoff end
  redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil((e - now) / 1000)) + 1000)
end
`

// reserveScript: ARGV delay, maxWait, maxBackoff. Returns {granted (0/1),
// wait, cause}.
var reserveScript = redis.NewScript(paceLib + `
local delay, maxWait = math.max(tonumber(ARGV[1]), 0), tonumber(ARGV[2])
local at, cause = now, ''
if f > at then at, cause = f, 'crawl-delay' end
if p > at then at, cause = p, 'backoff' end
local wait = at - now
if wait > maxWait then return {0, wait, cause} end
if not exists and delay == 0 then return {1, 0, ''} end
f = at + delay
save(tonumber(ARGV[3]))
return {1, wait, cause}`)

// claimLib claims the turn (politeness.Scheduler.Start) for delay
// (above 0), lease and claim id (ARGV[i], ARGV[i+1], ARGV[i+2]): with a
// lease the claim is held until endScript ends it, and counts as sent
// when its lease ends.
const claimLib = `
local function claim(delay, lease, id)
  s = now + delay
  if s > f then f = s end
  if lease > 0 then
    h, c = now + lease, id
    s = h + delay
  end
end
`

// startScript: ARGV delay, maxBackoff, lease, claim id. Returns {claimed
// (0/1), wait, held (0/1)}.
var startScript = redis.NewScript(paceLib + claimLib + `
local delay = math.max(tonumber(ARGV[1]), 0)
if not exists and delay == 0 then return {1, 0, 0} end
if h > now then return {0, math.max(delay, 1), 1} end
if s > now then return {0, s - now, 0} end
claim(delay, tonumber(ARGV[3]), ARGV[4])
save(tonumber(ARGV[2]))
return {1, 0, 0}`)

// endScript is what a request leaves to the store once it is sent and
// answered, in one script: the end of its claim (politeness.Scheduler.Sent),
// the success that clears an ended back-off (Succeeded) and the release of
// its in-flight leases. KEYS: the pace key, and the gate key when leases
// are released (one hash tag, one cluster slot). ARGV: the claim id ("":
// no claim to end), delay, ago (microseconds), sent (0/1), maxBackoff,
// succeeded (0/1), then the lease ids to remove.
//
// The claim is ended when it is still the key's: the next turn is delay
// after the send (now - ago), or free when nothing was sent. The success
// clears the pause and the streak when the pause has ended. The leases
// are removed first, so that a politeness record the script refuses (see
// paceLib) does not keep them.
var endScript = redis.NewScript(`
for i = 7, #ARGV do redis.call('ZREM', KEYS[2], ARGV[i]) end
` + paceLib + `
local write = false
if ARGV[1] ~= '' and h ~= 0 and c == ARGV[1] then
  h, s, write = 0, now, true
  if ARGV[4] == '1' then
    s = now - tonumber(ARGV[3]) + math.max(tonumber(ARGV[2]), 0)
    if s > f then f = s end
  end
end
if ARGV[6] == '1' and exists and p <= now and (p ~= 0 or k ~= 0) then
  p, k, write = 0, 0, true
end
if write then save(tonumber(ARGV[5])) end
return 0`)

// pauseScript returns how long the pause lasts from now.
var pauseScript = redis.NewScript(paceLib + `
return math.max(0, p - now)`)

// backoffScript: ARGV retryAfter, hasRetryAfter (0/1), defaultBackoff,
// maxBackoff. Returns the pause in force from now.
var backoffScript = redis.NewScript(paceLib + `
local maxBackoff = tonumber(ARGV[4])
local pause = tonumber(ARGV[1])
if ARGV[2] ~= '1' then
  pause = tonumber(ARGV[3]) * (2 ^ math.min(k, 20))
  k = math.min(k + 1, 20)
end
pause = math.min(math.max(pause, 0), maxBackoff)
if now + pause > p then p = now + pause end
save(maxBackoff)
return math.max(0, p - now)`)
