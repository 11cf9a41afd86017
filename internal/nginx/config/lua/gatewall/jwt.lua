-- JSON Web Token authentication of an AuthenticationFilter of type JWT, in
-- a location's access phase (access_by_lua_block): NGINX OSS has no JWT
-- module. The configuration calls verify(id) with the filter's ID (32 hex
-- digits); what the filter asks (its realm, leeway, keys or remote key
-- set, the claims it requires and forwards) is data, in the policies file
-- the manager wrote (package jwks, Policies), loaded when NGINX loads the
-- configuration (init). Nothing a user wrote is code here.
--
-- The decision rules are package jwks's Decide, which the fuzz tests hold
-- to and which test/auth replays tokens through this code against: change
-- both together.
--
--   - The token: "Authorization: Bearer <token>" (the scheme in any case),
--     three base64url parts decoded strictly (no padding, one spelling of
--     each value), the header and claims JSON objects of valid UTF-8,
--     bounded in size and depth.
--   - The header: alg one Gatewall verifies ("none" is not), no crit, kid
--     a string. The keys tried are those of the kid (with none having it,
--     those without a kid), or without a kid any, of those whose algs hold
--     alg, at most four; a key never verifies an algorithm of another key
--     type (no RSA public key used as an HMAC secret).
--   - The claims: exp, nbf and iat numbers within their times, with the
--     leeway; then the authorization; then the forwarded claims, each
--     carried only if it has no control character and fits a header.
--
-- A request without a token, with an invalid one, or whose claims do not
-- satisfy the authorization is answered 401 with WWW-Authenticate: Bearer
-- realm="..." (NGINX Gateway Fabric answers 401 for the last too); one
-- whose remote key set the data plane has not fetched yet, 503; a filter
-- the policies do not hold, 500. None is let through.

local cjson = require "cjson.safe"
local b64 = require "ngx.base64"
local crypto = require "gatewall.jwtcrypto"
local keysets = require "gatewall.keysets"

local M = {}

local json = cjson.new()
json.decode_invalid_numbers(false)
json.decode_max_depth(16) -- jwks.MaxJSONDepth

-- The bounds of package jwks.
local max_authorization = 8192 -- MaxAuthorizationBytes
local max_header_segment = 2048 -- MaxHeaderSegment
local max_kid = 256 -- MaxKidBytes
local max_tries = 4 -- MaxTries
local max_claim_header = 4096 -- MaxClaimHeaderBytes

-- The algorithms Gatewall verifies: their family and hash size in bytes.
local algorithms = {RS256 = 32, RS384 = 48, RS512 = 64, PS256 = 32, PS384 = 48, PS512 = 64,
    ES256 = 32, ES384 = 48, HS256 = 32, HS384 = 48, HS512 = 64}

-- policies are the configuration's filters by ID, compiled (init).
local policies = {}

local function realm_value(realm)
    return (realm:gsub('[\\"]', "\\%0"))
end

local function strings(list)
    if type(list) ~= "table" then
        return nil
    end
    for _, s in ipairs(list) do
        if type(s) ~= "string" then
            return nil
        end
    end
    return list
end

-- compile checks one filter's policy and returns it as verify uses it.
local function compile(p)
    if type(p) ~= "table" or type(p.realm) ~= "string" then
        return nil, "no realm"
    end
    local c = {challenge = 'Bearer realm="' .. realm_value(p.realm) .. '"', leeway = 0, rules = {}, headers = {}}
    if p.leewayMillis ~= nil then
        if type(p.leewayMillis) ~= "number" then
            return nil, "invalid leeway"
        end
        c.leeway = p.leewayMillis / 1000
    end
    if p.keys ~= nil then
        local why
        c.keys, why = keysets.compile(p.keys)
        if not c.keys then
            return nil, why
        end
    elseif type(p.keySet) == "string" and #p.keySet == 32 then
        c.key_set = p.keySet
    else
        return nil, "no keys"
    end
    local a = p.authorization
    if a ~= nil then
        if type(a) ~= "table" or type(a.rules) ~= "table" or a.rules[1] == nil then
            return nil, "invalid authorization"
        end
        c.all = a.all == true
        for i, r in ipairs(a.rules) do
            if type(r) ~= "table" or type(r.claims) ~= "table" or r.claims[1] == nil then
                return nil, "invalid rule " .. i
            end
            local rule = {all = r.all == true, claims = {}}
            for j, m in ipairs(r.claims) do
                local claim = {path = strings(type(m) == "table" and m.path), exact = {}}
                if not claim.path or claim.path[1] == nil then
                    return nil, "invalid claim " .. j .. " of rule " .. i
                end
                for _, v in ipairs(strings(m.exact or {}) or {}) do
                    claim.exact[v] = true
                end
                if m.regex ~= nil then
                    if type(m.regex) ~= "string" then
                        return nil, "invalid regex"
                    end
                    claim.regex = m.regex
                end
                rule.claims[j] = claim
            end
            c.rules[i] = rule
        end
        c.authorize = true
    end
    for i, h in ipairs(type(p.headers) == "table" and p.headers or {}) do
        local path = strings(type(h) == "table" and h.path)
        if not path or path[1] == nil or type(h.var) ~= "string" or not h.var:find("^gw_jwt_[0-9a-z_]+$") then
            return nil, "invalid header " .. i
        end
        c.headers[i] = {path = path, var = h.var}
    end
    return c
end

-- init loads the configuration's policies (absent: it has no JWT filter)
-- and the remote key sets a previous NGINX of the pod left. It runs in
-- init_by_lua, also for `nginx -t`. A policy that does not check is left
-- out: its filter's requests are answered 500.
function M.init(policies_path, key_sets_state)
    keysets.init(key_sets_state)
    local f = io.open(policies_path, "r")
    if not f then
        return
    end
    local body = f:read("*a")
    f:close()
    local doc, err = cjson.decode(body)
    if type(doc) ~= "table" or type(doc.filters) ~= "table" then
        ngx.log(ngx.ERR, "gatewall: ignoring the JWT policies file ", policies_path, ": ", tostring(err))
        return
    end
    for id, p in pairs(doc.filters) do
        local c, why = compile(p)
        if c then
            policies[id] = c
        else
            ngx.log(ngx.ERR, "gatewall: the JWT policy of filter ", id, " is not loaded: ", why)
        end
    end
end

-- b64url decodes base64url strictly: no padding (the token's pattern has
-- none), and only the canonical spelling of each value.
local function b64url(s)
    if #s % 4 == 1 then
        return nil
    end
    local d = b64.decode_base64url(s)
    if d == nil or b64.encode_base64url(d) ~= s then
        return nil
    end
    return d
end

-- object decodes a token part that must be a JSON object of valid UTF-8.
local function object(s)
    if not s:find("^[ \t\r\n]*{") or not ngx.re.find(s, "^", "jou") then
        return nil
    end
    local v = json.decode(s)
    if type(v) ~= "table" then
        return nil
    end
    return v
end

local function lookup(claims, path)
    local v = claims
    for _, name in ipairs(path) do
        if type(v) ~= "table" then
            return nil
        end
        v = v[name]
    end
    return v
end

local function scalar(v)
    local t = type(v)
    if t == "string" then
        return v
    elseif t == "boolean" then
        return tostring(v)
    elseif t == "number" then
        return string.format("%.14g", v)
    end
    return nil
end

-- elements are a claim's values as text: a string, number or boolean, or
-- an array's elements that are such (cjson gives an array integer keys,
-- an object string keys); none for an object or null.
local function elements(v)
    if type(v) ~= "table" then
        local s = scalar(v)
        return s and {s} or {}
    end
    local out = {}
    if type(next(v)) ~= "number" then
        return out
    end
    for i = 1, #v do
        local s = scalar(v[i])
        if s then
            out[#out + 1] = s
        end
    end
    return out
end

local function matches(claim, claims)
    for _, e in ipairs(elements(lookup(claims, claim.path))) do
        if claim.exact[e] or claim.regex and ngx.re.find(e, claim.regex, "jo") then
            return true
        end
    end
    return false
end

-- every is all(n, f) when all, else any.
local function every(all, list, f)
    for _, x in ipairs(list) do
        if f(x) ~= all then
            return not all
        end
    end
    return all
end

local function authorized(p, claims)
    return every(p.all, p.rules, function(rule)
        return every(rule.all, rule.claims, function(claim) return matches(claim, claims) end)
    end)
end

-- verified checks the signature with the keys the token names.
local function verified(keys, alg, kid, sig, input)
    local by_kid = false
    if kid then
        for _, k in ipairs(keys) do
            by_kid = by_kid or k.kid == kid
        end
    end
    local family, size, tries = alg:sub(1, 2), algorithms[alg], 0
    for _, k in ipairs(keys) do
        if tries == max_tries then
            break
        end
        local picked = not kid or (by_kid and k.kid == kid) or (not by_kid and k.kid == "")
        if picked and k.algs[alg] then
            tries = tries + 1
            if family ~= "HS" then
                keysets.public_key(k)
            end
            if crypto.verify(family, size, k, sig, input) then
                return true
            end
        end
    end
    return false
end

local function deny(p, err, reason)
    ngx.header["WWW-Authenticate"] = err and (p.challenge .. ', error="' .. err .. '"') or p.challenge
    ngx.log(ngx.INFO, "gatewall: JWT refused: ", reason)
    return ngx.exit(401)
end

local token_re = [[^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$]]

-- verify authenticates the request for the filter id.
function M.verify(id)
    local p = policies[id]
    if not p then
        ngx.log(ngx.ERR, "gatewall: no JWT policy for filter ", id)
        return ngx.exit(500)
    end
    local auth = ngx.var.http_authorization or ""
    if #auth > max_authorization then
        return deny(p, "invalid_token", "the Authorization header is too long")
    end
    if #auth < 7 or auth:sub(1, 6):lower() ~= "bearer" or auth:byte(7) ~= 32 then
        return deny(p, nil, "no bearer token")
    end
    local token = auth:sub(8):gsub("^ +", "")
    local m = ngx.re.match(token, token_re, "jo")
    if not m then
        return deny(p, "invalid_token", "not a signed token (three base64url parts)")
    end
    if #m[1] > max_header_segment then
        return deny(p, "invalid_token", "the token's header is too long")
    end
    local head, body, sig = b64url(m[1]), b64url(m[2]), b64url(m[3])
    if not head or not body or not sig then
        return deny(p, "invalid_token", "malformed base64url")
    end
    local h = object(head)
    if not h then
        return deny(p, "invalid_token", "the token's header is not a JSON object")
    end
    local alg = h.alg
    if type(alg) ~= "string" or not algorithms[alg] then
        return deny(p, "invalid_token", "alg is not one Gatewall verifies")
    end
    if h.crit ~= nil then
        return deny(p, "invalid_token", "the token has critical header parameters")
    end
    local kid = h.kid
    if kid ~= nil and (type(kid) ~= "string" or #kid == 0 or #kid > max_kid) then
        return deny(p, "invalid_token", "kid is not a string of 1 to 256 bytes")
    end
    local claims = object(body)
    if not claims then
        return deny(p, "invalid_token", "the token's claims are not a JSON object")
    end
    local keys = p.keys
    if not keys then
        keys = keysets.get(p.key_set)
        if not keys then
            ngx.log(ngx.WARN, "gatewall: JWT key set ", p.key_set, " has not been fetched yet")
            return ngx.exit(503)
        end
    end
    if not verified(keys, alg, kid, sig, m[1] .. "." .. m[2]) then
        return deny(p, "invalid_token", "no key verifies the signature")
    end
    local now = ngx.now()
    local exp, nbf, iat = claims.exp, claims.nbf, claims.iat
    if exp ~= nil and (type(exp) ~= "number" or now >= exp + p.leeway)
            or nbf ~= nil and (type(nbf) ~= "number" or now + p.leeway < nbf)
            or iat ~= nil and (type(iat) ~= "number" or iat > now + p.leeway) then
        return deny(p, "invalid_token", "exp, nbf or iat is not a number or not within its time")
    end
    if p.authorize and not authorized(p, claims) then
        return deny(p, "insufficient_scope", "the claims do not satisfy the authorization")
    end
    local values = {}
    for i, hd in ipairs(p.headers) do
        local v = table.concat(elements(lookup(claims, hd.path)), ",")
        if #v > max_claim_header or v:find("[%z\1-\31\127]") then
            return deny(p, "invalid_token", "a claim to forward holds a control character or is too long")
        end
        values[i] = v
    end
    for i, hd in ipairs(p.headers) do
        ngx.var[hd.var] = values[i]
    end
end

return M
