-- A realistic cycle per request stream: pull -> loading release -> firstBatchRendered ->
-- allBatchesRendered -> refreshResult, on the sessions bench-0 .. bench-(N-1).
-- Each wrk thread walks its own sessions; every request is a real input.
dofile(os.getenv("BENCH_DIR") .. "/roundrobin.lua")
-- Request ids are unique per run (BENCH_TOKEN), so repeated runs on the same sessions stay valid.
local token = os.getenv("BENCH_TOKEN") or tostring(os.time())
local n = 0
function request()
  n = n + 1
  local session = "bench-" .. ((tid * 7919 + n) % sessions)
  local id = token .. "-t" .. tid .. "-" .. math.floor(n / 5)
  local step = n % 5
  local path = "/v1/sessions/" .. session .. "/web-events"
  local body
  if step == 0 then
    path = "/v1/sessions/" .. session .. "/gestures"
    body = '{"type":"pull","requestId":"' .. id .. '"}'
  elseif step == 1 then
    body = '{"type":"webView.loadingPresentation","owner":"web","reason":"content_visible"}'
  elseif step == 2 then
    body = '{"type":"todayPage.firstBatchRendered","schemaVersion":1,"batchId":"b1","elapsedMs":42,"requestId":"' .. id .. '"}'
  elseif step == 3 then
    body = '{"type":"todayPage.allBatchesRendered","schemaVersion":1,"status":"succeeded","empty":false,"elapsedMs":80,"requestId":"' .. id .. '"}'
  else
    body = '{"type":"todayPage.refreshResult","schemaVersion":1,"requestId":"' .. id .. '","mode":"soft","status":"succeeded"}'
  end
  return wrk.format("POST", path, {["Content-Type"] = "application/json"}, body)
end
