-- Background / foreground on one session ($BENCH_SESSION).
local session = os.getenv("BENCH_SESSION") or "fresh"
local n = 0
function request()
  n = n + 1
  local kind = (n % 2 == 0) and "background" or "foreground"
  return wrk.format("POST", "/v1/sessions/" .. session .. "/lifecycle", {["Content-Type"] = "application/json"},
    '{"type":"' .. kind .. '"}')
end
