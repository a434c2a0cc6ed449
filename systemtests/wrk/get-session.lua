-- GET the view of bench-0 .. bench-(N-1), round robin.
dofile(os.getenv("BENCH_DIR") .. "/roundrobin.lua")
local n = 0
function request()
  n = n + 1
  return wrk.format("GET", "/v1/sessions/bench-" .. ((tid * 7919 + n) % sessions))
end
