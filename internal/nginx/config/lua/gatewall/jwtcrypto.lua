-- Signature verification for gatewall.jwt, with the libcrypto NGINX already
-- loads (OpenSSL 3.0 on Debian 12, libcrypto.so.3) through LuaJIT's FFI:
-- Debian has no lua-resty-openssl. Only verification: public keys (DER
-- SubjectPublicKeyInfo, which the manager wrote from a checked key set)
-- and HMAC secrets.
--
-- Every OpenSSL object made here is freed here: a context after each
-- verification, an ECDSA signature once encoded, a public key when the
-- Lua value holding it is collected (ffi.gc). OpenSSL's error queue is
-- cleared after each use, so that a failure is not read by NGINX's own
-- TLS code later in the worker.

local ffi = require "ffi"

local C = ffi.load("libcrypto.so.3")

-- Opaque OpenSSL types are void pointers here, so that no declaration
-- clashes with another module's.
pcall(ffi.cdef, [[
void *d2i_PUBKEY(void **a, const unsigned char **pp, long length);
void EVP_PKEY_free(void *pkey);
int EVP_PKEY_get_base_id(const void *pkey);
int EVP_PKEY_get_size(const void *pkey);
const void *EVP_sha256(void);
const void *EVP_sha384(void);
const void *EVP_sha512(void);
void *EVP_MD_CTX_new(void);
void EVP_MD_CTX_free(void *ctx);
int EVP_DigestVerifyInit(void *ctx, void **pctx, const void *type, void *e, void *pkey);
int EVP_DigestVerify(void *ctx, const unsigned char *sig, size_t siglen, const unsigned char *tbs, size_t tbslen);
int EVP_PKEY_CTX_set_rsa_padding(void *ctx, int pad);
int EVP_PKEY_CTX_set_rsa_pss_saltlen(void *ctx, int saltlen);
void *ECDSA_SIG_new(void);
void ECDSA_SIG_free(void *sig);
int ECDSA_SIG_set0(void *sig, void *r, void *s);
int i2d_ECDSA_SIG(const void *sig, unsigned char **pp);
void *BN_bin2bn(const unsigned char *s, int len, void *ret);
void BN_free(void *a);
unsigned char *HMAC(const void *md, const void *key, int key_len, const unsigned char *d, size_t n, unsigned char *out, unsigned int *out_len);
int CRYPTO_memcmp(const void *a, const void *b, size_t len);
void ERR_clear_error(void);
]])

local M = {}

-- OpenSSL's numbers (openssl/evp.h, rsa.h, obj_mac.h).
local EVP_PKEY_RSA, EVP_PKEY_EC = 6, 408
local RSA_PKCS1_PSS_PADDING, RSA_PSS_SALTLEN_DIGEST = 6, -1

-- The digests, by hash size in bytes.
local digests = {[32] = C.EVP_sha256(), [48] = C.EVP_sha384(), [64] = C.EVP_sha512()}

-- public_key reads a DER public key: an EVP_PKEY freed when collected, its
-- type (EVP_PKEY_RSA or EVP_PKEY_EC) and size (an RSA key's signatures'
-- length); nil when it does not parse.
function M.public_key(der)
    local buf = ffi.new("unsigned char[?]", #der)
    ffi.copy(buf, der, #der)
    local pp = ffi.new("const unsigned char *[1]", buf)
    local pkey = C.d2i_PUBKEY(nil, pp, #der)
    if pkey == nil then
        C.ERR_clear_error()
        return nil
    end
    pkey = ffi.gc(pkey, C.EVP_PKEY_free)
    return pkey, C.EVP_PKEY_get_base_id(pkey), C.EVP_PKEY_get_size(pkey)
end

local pctx_out = ffi.new("void *[1]")

-- verify_digest checks a signature of input with a public key.
local function verify_digest(pkey, size, sig, input, pss)
    local ctx = C.EVP_MD_CTX_new()
    if ctx == nil then
        return false
    end
    local ok = false
    pctx_out[0] = nil
    if C.EVP_DigestVerifyInit(ctx, pctx_out, digests[size], nil, pkey) == 1 then
        local pctx = pctx_out[0]
        if not pss or C.EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) > 0
                and C.EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) > 0 then
            ok = C.EVP_DigestVerify(ctx, sig, #sig, input, #input) == 1
        end
    end
    C.EVP_MD_CTX_free(ctx)
    C.ERR_clear_error()
    return ok
end

-- ecdsa_der turns a JWS ECDSA signature (r and s, n bytes each) into the
-- DER OpenSSL verifies; nil when it is not 2n bytes.
local function ecdsa_der(sig, n)
    if #sig ~= 2 * n then
        return nil
    end
    local es = C.ECDSA_SIG_new()
    if es == nil then
        return nil
    end
    local raw = ffi.cast("const unsigned char *", sig)
    local r, s = C.BN_bin2bn(raw, n, nil), C.BN_bin2bn(raw + n, n, nil)
    if r == nil or s == nil or C.ECDSA_SIG_set0(es, r, s) ~= 1 then
        if r ~= nil then C.BN_free(r) end
        if s ~= nil then C.BN_free(s) end
        C.ECDSA_SIG_free(es)
        C.ERR_clear_error()
        return nil
    end
    -- es owns r and s now.
    local der
    local len = C.i2d_ECDSA_SIG(es, nil)
    if len > 0 then
        local buf = ffi.new("unsigned char[?]", len)
        local pp = ffi.new("unsigned char *[1]", buf)
        if C.i2d_ECDSA_SIG(es, pp) == len then
            der = ffi.string(buf, len)
        end
    end
    C.ECDSA_SIG_free(es)
    C.ERR_clear_error()
    return der
end

-- verify checks sig over input with a key of the family alg needs: "RS"
-- (PKCS #1 v1.5), "PS" (PSS, salt of the hash's size), "ES" (ECDSA, the
-- curve's n bytes per number) or "HS" (HMAC); size is the hash's size in
-- bytes. key is {pkey, pkey_type} or {secret}.
function M.verify(family, size, key, sig, input)
    if family == "HS" then
        local secret = key.secret
        if not secret or #sig ~= size then
            return false
        end
        local out = ffi.new("unsigned char[64]")
        local out_len = ffi.new("unsigned int[1]")
        if C.HMAC(digests[size], secret, #secret, input, #input, out, out_len) == nil then
            C.ERR_clear_error()
            return false
        end
        return out_len[0] == size and C.CRYPTO_memcmp(out, sig, size) == 0
    end
    if not key.pkey then
        return false
    end
    if family == "ES" then
        if key.pkey_type ~= EVP_PKEY_EC then
            return false
        end
        local der = ecdsa_der(sig, key.curve_size)
        return der ~= nil and verify_digest(key.pkey, size, der, input, false)
    end
    -- OpenSSL reads a PSS signature shorter than the modulus as the same
    -- number; a token has one spelling (and Go's rsa, the reference, the
    -- same rule).
    if key.pkey_type ~= EVP_PKEY_RSA or #sig ~= key.pkey_size then
        return false
    end
    return verify_digest(key.pkey, size, sig, input, family == "PS")
end

return M
