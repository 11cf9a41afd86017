-- Key sets of gatewall.jwt: their keys as verification needs them, and the
-- remote ones, which the data plane's endpoints client fetches in the
-- background and hands over the control socket (serve), after writing them
-- to a state file that a starting NGINX loads (init). They are kept in the
-- shared dict gatewall_jwks, so that every worker verifies with the same
-- keys and a reload keeps them; a request never fetches anything.
--
-- A set is the JSON the manager's Go writes (package jwks, Set): the
-- endpoints client fetched and checked the key set, and wrote it anew. It
-- is data: checked again here before use, never run.
--
-- Keys of the dict:
--   "k:" .. id   a remote set's JSON (id: 32 hex digits, jwks.SourceID)
--   "serial"     counts changes; workers drop their parsed sets when it moves
--
-- One client (the pod's endpoints container) sends the whole map of sets
-- each time; each set is stored alone (safe_set: a full dict refuses a set
-- rather than evicting another tenant's; the dict is sized for the most
-- sets of the largest size), a set refused keeps what it had, and a set
-- the update leaves out is removed.

local cjson = require "cjson.safe"
local crypto = require "gatewall.jwtcrypto"

local M = {}

local dict = ngx.shared.gatewall_jwks

local json = cjson.new()
json.decode_invalid_numbers(false)
json.decode_max_depth(8)

-- The bounds of package jwks (MaxSetBytes, MaxKeys, MaxKidBytes) and of
-- the feed (endpoints.MaxKeySources).
local max_set_bytes = 65536
local max_keys = 32
local max_kid = 256
local max_sets = 64

-- The algorithms of each key type, with their hash sizes, and the size of
-- each curve's numbers.
local families = {RSA = {RS = true, PS = true}, EC = {ES = true}, oct = {HS = true}}
local curve_sizes = {["P-256"] = 32, ["P-384"] = 48}
local algs = {RS256 = 32, RS384 = 48, RS512 = 64, PS256 = 32, PS384 = 48, PS512 = 64,
    ES256 = 32, ES384 = 48, HS256 = 32, HS384 = 48, HS512 = 64}

local function valid_id(id)
    return type(id) == "string" and #id == 32 and not id:find("[^0-9a-f]")
end

-- compile_key checks one key of a set (a table decoded from JSON) and
-- returns it as verification needs it, or nil and why.
local function compile_key(k)
    if type(k) ~= "table" or not families[k.kty] then
        return nil, "not a key of a type Gatewall verifies with"
    end
    local key = {kid = k.kid or "", algs = {}}
    if type(key.kid) ~= "string" or #key.kid > max_kid then
        return nil, "invalid kid"
    end
    if type(k.algs) ~= "table" or k.algs[1] == nil then
        return nil, "no algs"
    end
    for _, a in ipairs(k.algs) do
        -- A key verifies only algorithms of its own family: an RSA
        -- public key is never an HMAC secret.
        if type(a) ~= "string" or not algs[a] or not families[k.kty][a:sub(1, 2)] then
            return nil, "alg " .. tostring(a) .. " is not one of the key's type"
        end
        key.algs[a] = true
    end
    if k.kty == "oct" then
        key.secret = type(k.k) == "string" and ngx.decode_base64(k.k)
        if not key.secret or #key.secret < 32 then
            return nil, "invalid secret"
        end
        return key
    end
    local der = type(k.der) == "string" and ngx.decode_base64(k.der)
    if not der then
        return nil, "invalid der"
    end
    if k.kty == "EC" then
        key.curve_size = curve_sizes[k.crv]
        if not key.curve_size then
            return nil, "invalid crv"
        end
    end
    -- The public key is read when a worker first verifies with it.
    key.der = der
    return key
end

-- compile checks a set (decoded) and returns its keys, or nil and why. A
-- key that does not check makes the set refused: the manager wrote it,
-- so that is a fault, not a user's key to skip.
function M.compile(set)
    if type(set) ~= "table" or type(set.keys) ~= "table" then
        return nil, "not a key set"
    end
    local keys = {}
    for i, k in ipairs(set.keys) do
        if i > max_keys then
            return nil, "too many keys"
        end
        local key, why = compile_key(k)
        if not key then
            return nil, "key " .. i .. ": " .. why
        end
        keys[i] = key
    end
    if keys[1] == nil then
        return nil, "no keys"
    end
    return keys
end

-- public_key returns a key's EVP_PKEY, read once per worker; nil when its
-- DER does not parse.
function M.public_key(key)
    if key.pkey == nil and key.der then
        key.pkey, key.pkey_type, key.pkey_size = crypto.public_key(key.der)
        if key.pkey == nil then
            ngx.log(ngx.ERR, "gatewall: a key of a JWT key set does not parse")
        end
        key.der = nil
    end
    return key.pkey
end

-- Parsed remote sets, per worker; dropped when the dict's serial moves.
local cache, cache_serial = {}, -1

-- get returns a remote set's keys, nil when the data plane has not got it
-- (yet).
function M.get(id)
    local serial = dict:get("serial") or 0
    if serial ~= cache_serial then
        cache, cache_serial = {}, serial
    end
    local keys = cache[id]
    if keys == nil then
        local text = dict:get("k:" .. id)
        if text == nil then
            return nil
        end
        local why
        keys, why = M.compile(json.decode(text))
        if not keys then
            ngx.log(ngx.ERR, "gatewall: JWT key set ", id, " is refused: ", why)
            keys = false
        end
        cache[id] = keys
    end
    return keys or nil
end

-- apply stores an update: {sets = {id = "set JSON"}}, replacing every set.
-- A form that is wrong changes nothing (nil and why); otherwise each set
-- is stored alone, and it returns the new serial and the sets refused.
local function apply(doc)
    if type(doc) ~= "table" or type(doc.sets) ~= "table" then
        return nil, "an update needs sets"
    end
    local n = 0
    for id in pairs(doc.sets) do
        if not valid_id(id) then
            return nil, "invalid key set id " .. tostring(id):sub(1, 64)
        end
        n = n + 1
    end
    if n > max_sets then
        return nil, n .. " key sets, over the " .. max_sets .. " a Gateway may have"
    end
    local refused = {}
    for _, key in ipairs(dict:get_keys(0)) do
        local id = key:match("^k:(.+)$")
        if id and doc.sets[id] == nil then
            dict:delete(key)
        end
    end
    for id, text in pairs(doc.sets) do
        local ok, why = type(text) == "string" and #text <= max_set_bytes, "not a set of at most " .. max_set_bytes .. " bytes"
        if ok then
            ok, why = M.compile(json.decode(text))
        end
        if ok then
            ok, why = dict:safe_set("k:" .. id, text)
            if not ok then
                why = "no room in the key sets dict: " .. tostring(why)
            end
        end
        if not ok then
            refused[id] = why
        end
    end
    return dict:incr("serial", 1, 0), refused
end

-- init loads the state file a previous NGINX of this pod left (the
-- endpoints client writes it) unless the dict holds sets already (a
-- reload keeps them). It runs in init_by_lua, also for `nginx -t`.
function M.init(path)
    if dict:get("serial") ~= nil then
        return
    end
    local f = io.open(path, "r")
    if not f then
        return
    end
    local body = f:read("*a")
    f:close()
    local serial, refused = apply(json.decode(body))
    if not serial then
        ngx.log(ngx.ERR, "gatewall: ignoring the JWT key sets state file ", path, ": ", refused)
        return
    end
    for id, why in pairs(refused) do
        ngx.log(ngx.ERR, "gatewall: JWT key set ", id, " of the state file is not loaded: ", why)
    end
end

local function respond(status, doc)
    ngx.status = status
    ngx.header["Content-Type"] = "application/json"
    ngx.say(cjson.encode(doc))
    return ngx.exit(status)
end

-- serve answers the control socket: POST replaces the sets, GET tells
-- which are held.
function M.serve()
    local method = ngx.req.get_method()
    if method == "GET" then
        local ids = {}
        for _, key in ipairs(dict:get_keys(0)) do
            local id = key:match("^k:(.+)$")
            if id then
                ids[#ids + 1] = id
            end
        end
        table.sort(ids)
        return respond(200, {serial = dict:get("serial") or 0, sets = ids, free = dict:free_space()})
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
    local serial, refused = apply(doc)
    if not serial then
        return respond(400, {error = refused})
    end
    local answer = {serial = serial}
    if next(refused) ~= nil then
        answer.refused = refused
    end
    return respond(200, answer)
end

return M
