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
-- Keys of the dict:
--   "e:" .. id   the upstream's endpoints, "host:port host:port ..." (IPv6
--                hosts in brackets); absent: no endpoint known
--   "serial"     counts changes; workers drop their parsed copies when it moves
--   "version"    the version of the last update applied (the manager's)
--   "synced"     true once a full set was applied: the pod may be ready

local cjson = require "cjson.safe"

local M = {}

local dict = ngx.shared.gatewall_endpoints

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
        if v6 == nil or ipv4_mapped(v6) then
            return false
        end
        host = v6
    end
    port = tonumber(port)
    return host ~= nil and port ~= nil and port >= 1 and port <= 65535
end

-- apply applies one update: {version, full, set = {id = {endpoints}}, deleted = {id}}.
-- A full update replaces every upstream's endpoints. It checks the whole
-- update before changing anything, so a bad update changes nothing.
local function apply(doc)
    if type(doc) ~= "table" or type(doc.version) ~= "number" then
        return nil, "an update needs a version"
    end
    local set, deleted = doc.set or {}, doc.deleted or {}
    if type(set) ~= "table" or type(deleted) ~= "table" then
        return nil, "set and deleted must be objects and lists"
    end
    local lists = {}
    for id, up in pairs(set) do
        if not valid_id(id) or type(up) ~= "table" then
            return nil, "invalid upstream " .. tostring(id)
        end
        local eps = up.endpoints
        if eps == nil or eps == cjson.null then
            eps = {}
        end
        if type(eps) ~= "table" then
            return nil, "invalid endpoints of upstream " .. id
        end
        for _, ep in ipairs(eps) do
            if not valid_endpoint(ep) then
                return nil, "invalid endpoint " .. tostring(ep) .. " of upstream " .. id
            end
        end
        lists[id] = table.concat(eps, " ")
    end
    for _, id in ipairs(deleted) do
        if not valid_id(id) then
            return nil, "invalid deleted upstream " .. tostring(id)
        end
    end
    if doc.full then
        for _, key in ipairs(dict:get_keys(0)) do
            local id = key:match("^e:(.+)$")
            if id and lists[id] == nil then
                dict:delete(key)
            end
        end
    end
    for id, list in pairs(lists) do
        -- safe_set: a full dict refuses instead of evicting other upstreams.
        local ok, err = dict:safe_set("e:" .. id, list)
        if not ok then
            return nil, "storing upstream " .. id .. ": " .. tostring(err)
        end
    end
    for _, id in ipairs(deleted) do
        dict:delete("e:" .. id)
    end
    dict:set("version", doc.version)
    if doc.full then
        dict:set("synced", true)
    end
    return dict:incr("serial", 1, 0)
end

-- init loads the state file a previous NGINX of this pod left, unless the
-- dict already holds endpoints (a reload keeps them). It runs in
-- init_by_lua, also for `nginx -t`, where it only reads.
function M.init(path)
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
        doc.full = true
    end
    local ok, err = apply(doc)
    if not ok then
        ngx.log(ngx.ERR, "gatewall: ignoring the endpoints state file ", path, ": ", err)
    end
end

local function respond(status, doc)
    ngx.status = status
    ngx.header["Content-Type"] = "application/json"
    ngx.say(cjson.encode(doc))
    return ngx.exit(status)
end

-- serve answers the control socket: POST applies an update, GET tells what
-- is applied.
function M.serve()
    local method = ngx.req.get_method()
    if method == "GET" then
        return respond(200, {version = dict:get("version"), synced = dict:get("synced") or false,
            serial = dict:get("serial") or 0})
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
    local serial
    serial, err = apply(doc)
    if not serial then
        return respond(400, {error = err})
    end
    return respond(200, {version = doc.version, serial = serial})
end

-- ready answers the readiness probe: 204 once endpoints were applied.
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
