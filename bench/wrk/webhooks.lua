-- wrk script for the receiver benchmark (bench/receiver-wrk.ts): POSTs pre-signed, unique webhook
-- deliveries, each built once in init() so request() is a table lookup (wrk's own advice for fast servers).
--
--   wrk -t2 -c50 -d10s --latency -s bench/wrk/webhooks.lua http://127.0.0.1:PORT/webhooks/service -- <file> <threads>
--
-- <file> is written by bench/wrk/requests-file.ts just before the run (signatures are time-bound):
--   line 1: the header names, tab-separated
--   then one delivery per line: the header values in the same order, then the body (JSON: no raw tab or
--   newline in it), tab-separated.
-- Thread k of <threads> takes lines k, k + threads, ...: no two threads send the same event. A thread that
-- runs out of lines starts again at its first (a duplicate delivery); done() prints how many of each
-- thread's deliveries were built and whether that happened, so the runner can tell. Nothing else is
-- recorded here: latency and throughput are wrk's own (--latency).

local threads = {}
local next_id = 0

function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

local function split_tabs(line)
  local fields = {}
  local start = 1
  while true do
    local tab = string.find(line, "\t", start, true)
    if not tab then
      fields[#fields + 1] = string.sub(line, start)
      return fields
    end
    fields[#fields + 1] = string.sub(line, start, tab - 1)
    start = tab + 1
  end
end

local requests = {}
loaded = 0
built = 0

function init(args)
  local file = args[1]
  local nthreads = tonumber(args[2])
  if not file or not nthreads then
    error("usage: -- <requests file> <threads>")
  end
  local names
  local n = 0
  for line in io.lines(file) do
    if not names then
      names = split_tabs(line)
    else
      if n % nthreads == id then
        local fields = split_tabs(line)
        local headers = {}
        for i = 1, #names do
          headers[names[i]] = fields[i]
        end
        requests[#requests + 1] = wrk.format("POST", nil, headers, fields[#names + 1])
      end
      n = n + 1
    end
  end
  loaded = #requests
  if loaded == 0 then
    error("no deliveries for thread " .. id .. " in " .. file)
  end
end

function request()
  built = built + 1
  return requests[(built - 1) % loaded + 1]
end

function done(summary, latency, requests)
  for _, thread in ipairs(threads) do
    local l, b = thread:get("loaded"), thread:get("built")
    io.write(string.format("wrk-lua thread=%d loaded=%d built=%d wrapped=%s\n", thread:get("id"), l, b, tostring(b > l)))
  end
end
