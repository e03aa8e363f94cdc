import { luaScript } from "./lua-script.ts";
import { HOLD_CHAT_FN, TAKE_SLOT_FN } from "./send-pacer.ts";

/**
 * Frees the leases given (each: the last send's hold on its chat recorded, the lease deleted only
 * while it still holds our token), then takes the leases asked for (SET NX PX with our token),
 * each with its chat's send slot in the same round trip when the slot is free. Answers two
 * numbers per lease asked for: 0, 0 when another holder has the chat; 1 and take_slot's answer
 * when taken. One round trip whatever the number of chats.
 * KEYS: n × (lease, chat pace) to free; then, when taking: global log, m × (lease, chat pace).
 * ARGV: n, n × (token, hold ms); then ttl, limit, window, interval, m × (token, member).
 */
export const LEASES = luaScript(`${HOLD_CHAT_FN}${TAKE_SLOT_FN}
local n = tonumber(ARGV[1])
for i = 1, n do
  local hold = tonumber(ARGV[2 * i + 1])
  if hold > 0 then hold_chat(KEYS[2 * i], hold) end
  if redis.call("GET", KEYS[2 * i - 1]) == ARGV[2 * i] then redis.call("DEL", KEYS[2 * i - 1]) end
end
local k, a = 2 * n, 2 * n + 1
local out = {}
if #KEYS == k then return out end
local globalKey = KEYS[k + 1]
local ttl, limit, window, interval = ARGV[a + 1], tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])
local m = (#KEYS - k - 1) / 2
for j = 1, m do
  local leaseKey, paceKey = KEYS[k + 2 * j], KEYS[k + 2 * j + 1]
  if redis.call("SET", leaseKey, ARGV[a + 3 + 2 * j], "PX", ttl, "NX") then
    out[2 * j - 1] = 1
    out[2 * j] = take_slot(globalKey, paceKey, limit, window, interval, ARGV[a + 4 + 2 * j])
  else
    out[2 * j - 1] = 0
    out[2 * j] = 0
  end
end
return out`);

/** Renews every lease given that still holds our token; answers 1 or 0 per lease. KEYS: leases; ARGV: ttl, tokens. */
export const EXTEND = luaScript(`
local out = {}
for i = 1, #KEYS do
  if redis.call("GET", KEYS[i]) == ARGV[i + 1] then
    redis.call("PEXPIRE", KEYS[i], ARGV[1])
    out[i] = 1
  else
    out[i] = 0
  end
end
return out`);

export const HOLD = luaScript(`${HOLD_CHAT_FN}
return hold_chat(KEYS[1], tonumber(ARGV[1]))`);
