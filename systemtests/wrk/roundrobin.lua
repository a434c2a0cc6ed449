-- Loaded by the scripts that walk the sessions bench-0 .. bench-(N-1) (BENCH_SESSIONS, default
-- 64): gives each wrk thread its own `tid`, so threads start on different sessions.
sessions = tonumber(os.getenv("BENCH_SESSIONS") or "64")
local thread_counter = 0
function setup(thread)
  thread:set("tid", thread_counter)
  thread_counter = thread_counter + 1
end
