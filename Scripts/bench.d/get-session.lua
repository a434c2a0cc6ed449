-- GET the view of bench-0 .. bench-(N-1), round robin.
local sessions = tonumber(os.getenv("BENCH_SESSIONS") or "64")
local thread_counter = 0
function setup(thread)
  thread:set("tid", thread_counter)
  thread_counter = thread_counter + 1
end
local n = 0
function request()
  n = n + 1
  return wrk.format("GET", "/v1/sessions/bench-" .. ((tid * 7919 + n) % sessions))
end
