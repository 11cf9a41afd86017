-- Gatewall's load balancer: picks, for each try of a request, one endpoint
-- of an upstream from the endpoints gatewall.endpoints keeps, by the
-- upstream's method, skipping endpoints that failed a connection of this
-- upstream recently (passive health) and the ones this request tried
-- already (unless its route retries and it has tried them all).
--
-- The configuration calls balance(id, method) in each upstream's
-- balancer_by_lua_block with an id of 32 hex digits and a method from the
-- fixed list below; the hash methods read their key from the variable
-- $gw_hash_<id>, which NGINX computes from the upstream's key. Nothing else
-- of the configuration reaches this code.
--
-- When an upstream has no endpoint, balance sets no peer and NGINX uses the
-- upstream's one declared server, a local one answering 503.

local ngx_balancer = require "ngx.balancer"
local endpoints = require "gatewall.endpoints"

local crc32 = ngx.crc32_long
local sha1_bin = ngx.sha1_bin
local random = math.random

local M = {}

-- The state of endpoints: failure marks and requests in flight, per
-- upstream. It is only ever added to safely (safe_set, safe_add): a full
-- dict records no more, and never evicts another upstream's state. The
-- endpoints' bounds (package endpoints) keep every mark within it; requests
-- in flight past its room are not counted (least_conn then counts them 0).
local state = ngx.shared.gatewall_balancer

-- Settings of the Gateway (configure, from init_by_lua).
local max_tries = 3
local fail_timeout = 10

-- configure sets the Gateway's settings: the most tries per request and
-- how long (ms) an endpoint whose connection failed is avoided.
function M.configure(tries, fail_ms)
    max_tries = tries
    fail_timeout = fail_ms / 1000
end

-- Parsed endpoint lists, per worker; dropped when the dict's serial moves.
local cache, cache_serial = {}, -1

-- state_key is the key of an endpoint's state of one kind ("f" failed,
-- "c" requests in flight) in one upstream: what an endpoint does for one
-- upstream is that upstream's alone. A tenant may list another tenant's
-- pod address behind its own upstream (and fail its TLS handshakes there):
-- the other tenant's upstream must not avoid the pod for it. The key is a
-- digest (21 bytes rather than up to 82: the dict holds twice as many
-- states), computed once per endpoint list.
local function state_key(kind, id, ep)
    return kind .. sha1_bin(id .. " " .. ep)
end

local function parse(id, list)
    local peers = {}
    for ep in list:gmatch("%S+") do
        local host, port = ep:match("^(.*):(%d+)$")
        peers[#peers + 1] = {host = host, port = tonumber(port), key = ep,
            failed_key = state_key("f", id, ep), conns_key = state_key("c", id, ep)}
    end
    return peers
end

local function upstream(id)
    local serial = endpoints.serial()
    if serial ~= cache_serial then
        cache, cache_serial = {}, serial
    end
    local u = cache[id]
    if u == nil then
        local list = endpoints.list(id)
        u = {peers = list and parse(id, list) or {}, rr = random(0, 65535)}
        cache[id] = u
    end
    return u
end

local function failed(peer)
    return state:get(peer.failed_key) ~= nil
end

local function mark_failed(peer)
    state:safe_set(peer.failed_key, true, fail_timeout)
end

-- usable says whether a peer may be tried: not tried by this request, and
-- not failed unless the request ignores failures (every untried peer failed).
local function usable(peer, try)
    return not try.tried[peer.key] and (try.ignore_failures or not failed(peer))
end

local function conns(peer)
    return state:get(peer.conns_key) or 0
end

local function round_robin(u, try)
    local n = #u.peers
    for _ = 1, n do
        u.rr = u.rr + 1
        local peer = u.peers[u.rr % n + 1]
        if usable(peer, try) then
            return peer
        end
    end
end

local function least_conn(u, try)
    local n, best, best_conns = #u.peers, nil, nil
    u.rr = u.rr + 1
    for i = 1, n do
        local peer = u.peers[(u.rr + i) % n + 1]
        if usable(peer, try) then
            local c = conns(peer)
            if best == nil or c < best_conns then
                best, best_conns = peer, c
            end
        end
    end
    return best
end

local function random_pick(u, try)
    local candidates = {}
    for _, peer in ipairs(u.peers) do
        if usable(peer, try) then
            candidates[#candidates + 1] = peer
        end
    end
    if #candidates == 0 then
        return nil
    end
    return candidates[random(#candidates)], candidates
end

local function random_two(u, try)
    local first, candidates = random_pick(u, try)
    if first == nil or #candidates == 1 then
        return first
    end
    local second = first
    while second == first do
        second = candidates[random(#candidates)]
    end
    if conns(second) < conns(first) then
        return second
    end
    return first
end

-- hashed walks from the key's hash the way NGINX's hash method does: on an
-- unusable peer it hashes again, up to 20 times, then goes round robin.
local function hashed(u, try, key)
    local n, h = #u.peers, crc32(key)
    for _ = 1, 20 do
        local peer = u.peers[h % n + 1]
        if usable(peer, try) then
            return peer
        end
        h = crc32(h .. key)
    end
    return round_robin(u, try)
end

-- ring builds the consistent-hash ring of an endpoint list: 160 points per
-- endpoint, as NGINX's hash ... consistent, so that a change of endpoints
-- moves only the keys of the endpoints that came or went.
local function ring(u)
    if u.ring then
        return u.ring
    end
    local points = {}
    for _, peer in ipairs(u.peers) do
        for i = 0, 159 do
            points[#points + 1] = {crc32(peer.key .. "#" .. i), peer}
        end
    end
    table.sort(points, function(a, b)
        if a[1] ~= b[1] then
            return a[1] < b[1]
        end
        return a[2].key < b[2].key
    end)
    u.ring = points
    return points
end

local function consistent(u, try, key)
    local points, h = ring(u), crc32(key)
    local lo, hi = 1, #points
    while lo < hi do
        local mid = math.floor((lo + hi) / 2)
        if points[mid][1] < h then
            lo = mid + 1
        else
            hi = mid
        end
    end
    if points[lo][1] < h then
        lo = 1
    end
    for i = 0, #points - 1 do
        local peer = points[(lo - 1 + i) % #points + 1][2]
        if usable(peer, try) then
            return peer
        end
    end
end

-- ip_key is the client's address as NGINX's ip_hash hashes it: the first
-- three octets of an IPv4 address, the whole of an IPv6 one.
local function ip_key()
    local addr = ngx.var.remote_addr or ""
    local v4 = addr:match("^(%d+%.%d+%.%d+)%.%d+$")
    return v4 or addr
end

local function hash_key(id)
    return ngx.var["gw_hash_" .. id] or ""
end

local pickers = {
    round_robin = function(u, try) return round_robin(u, try) end,
    least_conn = least_conn,
    random = function(u, try) return (random_pick(u, try)) end,
    random_two = random_two,
    ip_hash = function(u, try) return hashed(u, try, ip_key()) end,
    hash = function(u, try, id) return hashed(u, try, hash_key(id)) end,
    hash_consistent = function(u, try, id) return consistent(u, try, hash_key(id)) end,
}

-- counts says whether a method counts each endpoint's requests in flight.
-- The configuration runs log() only when an upstream has one of these
-- methods (nginx/config's countsInFlight): keep the two lists alike.
local counts = {least_conn = true, random_two = true}

-- previous_sent is how many bytes the request's previous try sent its
-- endpoint: 0 when the connection failed before the request could be sent
-- (refused, reset, timed out connecting). $upstream_bytes_sent lists the
-- tries, the one being set up last and empty ("0, 65 : ").
local function previous_sent()
    local tries = (ngx.var.upstream_bytes_sent or ""):gsub(" : $", "")
    return tonumber(tries:match("([^ ,:]*)$"))
end

-- canonical is an endpoint's address in one spelling, whoever wrote it
-- (the endpoints' list, NGINX's $upstream_addr): IPv4 octets and the port
-- as numbers, IPv6 as its 8 groups.
local function canonical(ep)
    local host, port = ep:match("^%[([0-9a-fA-F:]+)%]:(%d+)$")
    if host then
        local head, tail = host:match("^(.-)::(.*)$")
        local groups = {}
        for g in (head or host):gmatch("[^:]+") do groups[#groups + 1] = tonumber(g, 16) end
        if head then
            local right = {}
            for g in tail:gmatch("[^:]+") do right[#right + 1] = tonumber(g, 16) end
            for _ = 1, 8 - #groups - #right do groups[#groups + 1] = 0 end
            for _, g in ipairs(right) do groups[#groups + 1] = g end
        end
        return table.concat(groups, ":") .. "|" .. tonumber(port)
    end
    local a, b, c, d
    a, b, c, d, port = ep:match("^(%d+)%.(%d+)%.(%d+)%.(%d+):(%d+)$")
    if a then
        return tonumber(a) .. "." .. tonumber(b) .. "." .. tonumber(c) .. "." .. tonumber(d) .. "|" .. tonumber(port)
    end
    return ep
end

-- resume rebuilds a request's tries when NGINX calls the balancer again
-- (a try failed) for a method whose first try kept none: per-request state
-- (ngx.ctx) costs every request, and few are tried twice. NGINX lists the
-- addresses it tried in $upstream_addr, the try being set up last, empty,
-- after " : " ("a, b : "); those of an upstream the request passed before
-- (an internal redirect) come before another " : ".
local function resume(u)
    local addrs = (ngx.var.upstream_addr or ""):gsub(" : $", "")
    local from, at = 1, addrs:find(" : ", 1, true)
    while at do
        from = at + 3
        at = addrs:find(" : ", from, true)
    end
    if u.by_addr == nil then
        u.by_addr = {}
        for _, peer in ipairs(u.peers) do
            u.by_addr[canonical(peer.key)] = peer
        end
    end
    local try = {tried = {}, n = 0, retry = tonumber(ngx.var.gw_retry_tries) ~= nil}
    for addr in addrs:sub(from):gmatch("[^, ]+") do
        local peer = u.by_addr[canonical(addr)]
        if peer then
            try.tried[peer.key] = true
            try.n = try.n + 1
            try.last = peer
        end
    end
    return try
end

-- balance picks the endpoint of this try of the request.
function M.balance(id, method)
    local counted = counts[method]
    local u = upstream(id)
    local try
    -- The counting methods keep their tries in ngx.ctx from the first (the
    -- log phase ends their counts); the others only once a try failed,
    -- which get_last_failure says.
    if counted or ngx_balancer.get_last_failure() ~= nil then
        local ctx = ngx.ctx
        try = ctx.gatewall_try
        if try == nil and not counted then
            try = resume(u)
            ctx.gatewall_try = try
        end
    end
    if try == nil then
        if #u.peers == 0 then
            return -- the upstream's declared server answers 503
        end
        try = {tried = {}, n = 0, counted = counted}
        if counted then
            ngx.ctx.gatewall_try = try
        end
        local tries = math.min(#u.peers, max_tries)
        -- A route's retry (its location sets gw_retry_tries) gives every
        -- request that many tries, on endpoints already tried when it has
        -- tried them all: one endpoint may answer the second time.
        local retry_tries = tonumber(ngx.var.gw_retry_tries)
        if retry_tries then
            tries, try.retry = retry_tries, true
        end
        if tries > 1 then
            ngx_balancer.set_more_tries(tries - 1)
        end
    elseif try.last then
        -- NGINX calls again after a failed try. Only a failed connection
        -- counts against the endpoint: a slow or failed answer says more
        -- about one route than about the endpoint, and would have every
        -- route avoid it.
        local why = ngx_balancer.get_last_failure()
        if why == "failed" and previous_sent() == 0 then
            mark_failed(try.last)
        end
    end
    local pick = pickers[method] or pickers.round_robin
    local peer = pick(u, try, id)
    if peer == nil and not try.ignore_failures then
        -- Every endpoint this request has not tried failed recently: try
        -- them anyway rather than answer an error at once.
        try.ignore_failures = true
        peer = pick(u, try, id)
    end
    if peer == nil and try.retry then
        -- A retry after every endpoint was tried: start again.
        try.tried = {}
        peer = pick(u, try, id)
    end
    if peer == nil then
        return -- tried every endpoint: NGINX answers with the last failure
    end
    local ok, err = ngx_balancer.set_current_peer(peer.host, peer.port)
    if not ok then
        ngx.log(ngx.ERR, "gatewall: endpoint ", peer.key, " of upstream ", id, ": ", err)
        return
    end
    try.tried[peer.key] = true
    try.n = try.n + 1
    try.last = peer
    if try.counted then
        -- incr with an initial value would evict when the dict is full.
        state:safe_add(peer.conns_key, 0)
        if state:incr(peer.conns_key, 1) then
            try[#try + 1] = peer
        end
    end
end

-- log ends a request's counts of requests in flight (log_by_lua, at http
-- level, in configurations with an upstream of a counting method).
function M.log()
    local try = ngx.ctx.gatewall_try
    if try == nil or not try.counted then
        return
    end
    for _, peer in ipairs(try) do
        local left = state:incr(peer.conns_key, -1)
        if left ~= nil and left <= 0 then
            state:delete(peer.conns_key)
        end
    end
end

return M
