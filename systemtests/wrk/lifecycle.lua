-- Background / foreground on the sessions bench-0 .. bench-(N-1).
dofile(os.getenv("BENCH_DIR") .. "/roundrobin.lua")
local n = 0
function request()
  n = n + 1
  local session = "bench-" .. ((tid * 7919 + math.floor(n / 2)) % sessions)
  local kind = (n % 2 == 0) and "background" or "foreground"
  return wrk.format("POST", "/v1/sessions/" .. session .. "/lifecycle", {["Content-Type"] = "application/json"},
    '{"type":"' .. kind .. '"}')
end
