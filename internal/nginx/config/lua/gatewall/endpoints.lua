-- Gatewall's dynamic endpoints: the endpoints of every upstream of the
-- configuration, kept in the shared dict gatewall_endpoints so that a change
-- of endpoints reaches every worker without a reload.
--
-- The data plane's endpoints client (cmd/gatewall-endpoints) receives them
-- from the manager and hands them over the control socket (serve), after
-- writing them to a state file that a starting NGINX loads (init), so that
-- a restarted NGINX serves the last endpoints from its first request.
--
-- This file is Gatewall's own code, the same for every Gateway; everything
-- that depends on users arrives as data (JSON) and is checked here before use.
--
-- Each upstream is applied alone: one that is refused (its endpoints are
-- invalid or too many, or the dict has no room for them) keeps the
-- endpoints it had, and never stops, nor takes the room of, another
-- tenant's. The answer names the upstreams refused and why. The manager
-- bounds what it sends so that the dict holds it (graph/endpointbudget.go);
-- the bounds here are the last line.
--
-- Keys of the dict:
--   "e:" .. id   the upstream's endpoints, "host:port host:port ..." (IPv6
--                hosts in brackets); absent: no endpoint known
--   "n:" .. id   room taken for an upstream's next list, for an instant
--                (store)
--   "serial"     counts changes; workers drop their parsed copies when it moves
--   "version"    the version of the last update applied (the manager's)
--   "synced"     true once a full set was applied: the pod may be ready
--
-- One client (the pod's endpoints container) sends one update at a time:
-- the room store makes sure of is not taken by another update meanwhile.

local cjson = require "cjson.safe"

local M = {}

local dict = ngx.shared.gatewall_endpoints

-- The endpoints an upstream may have (init). An update's bytes are
-- bounded by the control location's client_max_body_size.
local max_endpoints = 0

-- Upstream ids are 32 hex digits, 128 bits (nginx/config.UpstreamID): an
-- id means one upstream in every configuration.
local function valid_id(id)
    return type(id) == "string" and #id == 32 and not id:find("[^0-9a-f]")
end

-- ipv4_mapped says whether an IPv6 address (hex groups, no brackets) is
-- IPv4-mapped (::ffff:a.b.c.d written in hex): the kernel connects to the
-- IPv4 address it maps, which the manager writes as IPv4; it checks no
-- other form.
local function ipv4_mapped(addr)
    local groups = {}
    local head, tail = addr:match("^(.-)::(.*)$")
    if head then
        local left, right = {}, {}
        for g in head:gmatch("[^:]+") do left[#left + 1] = g end
        for g in tail:gmatch("[^:]+") do right[#right + 1] = g end
        for _, g in ipairs(left) do groups[#groups + 1] = g end
        for _ = 1, 8 - #left - #right do groups[#groups + 1] = "0" end
        for _, g in ipairs(right) do groups[#groups + 1] = g end
    else
        for g in addr:gmatch("[^:]+") do groups[#groups + 1] = g end
    end
    if #groups ~= 8 then
        return false
    end
    for i = 1, 5 do
        if tonumber(groups[i], 16) ~= 0 then
            return false
        end
    end
    return tonumber(groups[6], 16) == 0xffff
end

-- valid_endpoint accepts "a.b.c.d:port" and "[ipv6]:port" only, the IPv6
-- address in hex groups (a dotted quad in it is an IPv4 address written as
-- IPv6) and not IPv4-mapped.
local function valid_endpoint(ep)
    if type(ep) ~= "string" or #ep > 64 then
        return false
    end
    local host, port = ep:match("^(%d+%.%d+%.%d+%.%d+):(%d+)$")
    if not host then
        local v6
        v6, port = ep:match("^%[([0-9a-fA-F:]+)%]:(%d+)$")
        -- A mapped address has a group ffff: the others need no expanding.
        if v6 == nil or v6:lower():find("ffff", 1, true) and ipv4_mapped(v6) then
            return false
        end
        host = v6
    end
    port = tonumber(port)
    return host ~= nil and port ~= nil and port >= 1 and port <= 65535
end

-- endpoint_list checks an upstream's endpoints and returns them as the
-- dict keeps them, or why they are refused.
local function endpoint_list(up)
    if type(up) ~= "table" then
        return nil, "not an object"
    end
    local eps = up.endpoints
    if eps == nil or eps == cjson.null then
        eps = {}
    end
    if type(eps) ~= "table" or (eps[1] == nil and next(eps) ~= nil) then
        return nil, "its endpoints are not a list"
    end
    if #eps > max_endpoints then
        return nil, string.format("%d endpoints, over the %d an upstream may have", #eps, max_endpoints)
    end
    for _, ep in ipairs(eps) do
        if not valid_endpoint(ep) then
            return nil, "invalid endpoint " .. tostring(ep):sub(1, 64)
        end
    end
    return table.concat(eps, " ")
end

-- store keeps an upstream's list. NGINX frees a value before it stores one
-- of another size under the same key, so a store that found no room would
-- lose the old list: the room is taken first under another key of the
-- same length (the same allocation), and given back just before the store,
-- which then finds it. A refusal keeps the old list.
local function store(id, list)
    local key = "e:" .. id
    if list == "" then
        dict:delete(key) -- no endpoint takes no room
        return true
    end
    local old = dict:get(key)
    if old == list then
        return true
    end
    if old ~= nil and #old ~= #list then
        local room = "n:" .. id
        dict:delete(room) -- left by a worker that died here
        local ok, err = dict:safe_add(room, list)
        if not ok then
            return nil, err
        end
        dict:delete(room)
    end
    return dict:safe_set(key, list)
end

-- A worker applying an update lets its other requests run between slices
-- of this many endpoints (a few tens of milliseconds; the largest update,
-- 100,000 endpoints, takes half a second).
local slice = 10000

-- apply applies one update: {version, full, set = {id = {endpoints}},
-- deleted = {id}}. A full update replaces every upstream's endpoints. An
-- update whose form is wrong changes nothing (nil and why); otherwise each
-- upstream is applied alone, and it returns the new serial and the
-- upstreams refused, by id, with why. pause, if set, is called between
-- slices of the work.
local function apply(doc, pause)
    if type(doc) ~= "table" or type(doc.version) ~= "number" then
        return nil, "an update needs a version"
    end
    local set, deleted = doc.set or {}, doc.deleted or {}
    if type(set) ~= "table" or type(deleted) ~= "table" then
        return nil, "set and deleted must be objects and lists"
    end
    for id in pairs(set) do
        if not valid_id(id) then
            return nil, "invalid upstream " .. tostring(id):sub(1, 64)
        end
    end
    for _, id in ipairs(deleted) do
        if not valid_id(id) then
            return nil, "invalid deleted upstream " .. tostring(id):sub(1, 64)
        end
    end
    local lists, refused = {}, {}
    local done = 0
    local function step(n)
        done = done + n
        if pause and done >= slice then
            pause()
            done = 0
        end
    end
    for id, up in pairs(set) do
        step(type(up) == "table" and type(up.endpoints) == "table" and #up.endpoints or 1)
        local list, why = endpoint_list(up)
        if list then
            lists[id] = list
        else
            refused[id] = why
        end
    end
    -- What goes first frees room for what follows: the upstreams removed,
    -- then the lists that shrink, then those that grow.
    if doc.full then
        for _, key in ipairs(dict:get_keys(0)) do
            local kind, id = key:match("^([en]):(.+)$")
            if kind == "n" or kind == "e" and set[id] == nil then
                dict:delete(key)
            end
        end
    else
        for _, id in ipairs(deleted) do
            dict:delete("e:" .. id)
        end
    end
    local ids, growth = {}, {}
    for id, list in pairs(lists) do
        ids[#ids + 1] = id
        growth[id] = #list - #(dict:get("e:" .. id) or "")
    end
    table.sort(ids, function(a, b)
        if growth[a] ~= growth[b] then
            return growth[a] < growth[b]
        end
        return a < b
    end)
    for _, id in ipairs(ids) do
        step(math.floor(#lists[id] / 16) + 1)
        local ok, err = store(id, lists[id])
        if not ok then
            refused[id] = "no room in the endpoints dict: " .. tostring(err)
        end
    end
    -- Their keys were made when NGINX started (init): a set of the same
    -- size never needs room, and never evicts an upstream.
    dict:set("version", doc.version)
    if doc.full then
        dict:set("synced", true)
    end
    return dict:incr("serial", 1, 0), refused
end

-- init bounds the upstreams, makes the dict's own keys, and loads the
-- state file a previous NGINX of this pod left (the pod's endpoints
-- client writes it), unless the dict already holds endpoints (a reload
-- keeps them). It runs in init_by_lua, also for `nginx -t`, where it only
-- reads. A state file that holds an upstream the dict cannot take loads
-- every other: the pod is ready with them.
function M.init(path, endpoints_per_upstream)
    max_endpoints = endpoints_per_upstream
    dict:safe_add("serial", 0)
    dict:safe_add("version", 0)
    dict:safe_add("synced", false)
    if dict:get("synced") then
        return
    end
    local f = io.open(path, "r")
    if not f then
        return
    end
    local body = f:read("*a")
    f:close()
    local doc = cjson.decode(body)
    if type(doc) == "table" then
        doc.full, doc.deleted = true, nil
    end
    local serial, refused = apply(doc)
    if not serial then
        ngx.log(ngx.ERR, "gatewall: ignoring the endpoints state file ", path, ": ", refused)
        return
    end
    for id, why in pairs(refused) do
        ngx.log(ngx.ERR, "gatewall: upstream ", id, " of the endpoints state file is not loaded: ", why)
    end
end

local function respond(status, doc)
    ngx.status = status
    ngx.header["Content-Type"] = "application/json"
    ngx.say(cjson.encode(doc))
    return ngx.exit(status)
end

-- serve answers the control socket: POST applies an update, GET tells what
-- is applied. NGINX refuses a body over its bound (413) before this runs.
function M.serve()
    local method = ngx.req.get_method()
    if method == "GET" then
        -- The dicts' free pages, for who measures what they hold
        -- (BenchmarkEndpointsDict).
        local balancer = ngx.shared.gatewall_balancer
        return respond(200, {version = dict:get("version"), synced = dict:get("synced") or false,
            serial = dict:get("serial") or 0, free = dict:free_space(), balancer_free = balancer:free_space()})
    end
    if method ~= "POST" then
        return respond(405, {error = "use GET or POST"})
    end
    ngx.req.read_body()
    local body = ngx.req.get_body_data()
    if not body then
        local path = ngx.req.get_body_file()
        if path then
            local f = io.open(path, "r")
            if f then
                body = f:read("*a")
                f:close()
            end
        end
    end
    local doc, err = cjson.decode(body or "")
    if not doc then
        return respond(400, {error = "invalid JSON: " .. tostring(err)})
    end
    local serial, refused = apply(doc, function() ngx.sleep(0) end)
    if not serial then
        return respond(400, {error = refused})
    end
    local answer = {version = doc.version, serial = serial}
    if next(refused) ~= nil then
        answer.refused = refused
    end
    return respond(200, answer)
end

-- ready answers the readiness probe: 204 once a full set was applied (the
-- upstreams that fit, when some did not).
function M.ready()
    if dict:get("synced") then
        return ngx.exit(204)
    end
    ngx.status = 503
    ngx.say("no endpoints yet")
    return ngx.exit(503)
end

-- list returns an upstream's endpoints as the dict holds them, and the
-- serial that version belongs to (for the balancer's per-worker cache).
function M.list(id)
    return dict:get("e:" .. id)
end

function M.serial()
    return dict:get("serial") or 0
end

return M
