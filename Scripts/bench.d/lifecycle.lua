-- Background / foreground on the sessions bench-0 .. bench-(N-1).
local sessions = tonumber(os.getenv("BENCH_SESSIONS") or "64")
local thread_counter = 0
function setup(thread)
  thread:set("tid", thread_counter)
  thread_counter = thread_counter + 1
end
local n = 0
function request()
  n = n + 1
  local session = "bench-" .. ((tid * 7919 + math.floor(n / 2)) % sessions)
  local kind = (n % 2 == 0) and "background" or "foreground"
  return wrk.format("POST", "/v1/sessions/" .. session .. "/lifecycle", {["Content-Type"] = "application/json"},
    '{"type":"' .. kind .. '"}')
end
