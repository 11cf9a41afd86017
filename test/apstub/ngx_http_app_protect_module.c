/*
 * TEST DOUBLE of F5 NGINX App Protect's module -- never shipped in a data
 * plane image. F5's module cannot be obtained here, so Gatewall's tests load
 * this one instead. It accepts the app_protect_* directives in the contexts
 * the real module does, so WAF configurations pass `nginx -t` and load; it
 * requires every policy and log bundle file to exist (the bundle must have
 * been delivered) and refuses a bundle whose first bytes say INCOMPATIBLE
 * (as App Protect refuses a bundle compiled for another version: the one
 * rejection Gatewall cannot foresee); and it "enforces" one trivial rule so end-to-end tests
 * can prove which routes a policy protects: where app_protect_enable is on,
 * a request carrying the header X-Gatewall-Test-Attack is answered 403, with
 * the policy file's path in the response header X-Gatewall-Test-Policy.
 * Where app_protect_security_log_enable is on, each blocked request is also
 * logged to every app_protect_security_log destination (stderr, a file, or
 * syslog:server=IP:port over UDP) as one line:
 *   gatewall-test-waf: blocked uri=<uri> policy=<policy file> profile=<log bundle>
 */
#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
#include <netdb.h>

typedef struct {
    ngx_flag_t   enable;
    ngx_str_t    policy_file;
    ngx_flag_t   log_enable;
    ngx_array_t *logs;
} ngx_http_app_protect_loc_conf_t;

typedef struct {
    ngx_str_t    enforcer_address;
} ngx_http_app_protect_main_conf_t;

static char *ngx_http_app_protect_policy_file(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
static char *ngx_http_app_protect_security_log(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
static void *ngx_http_app_protect_create_main_conf(ngx_conf_t *cf);
static void *ngx_http_app_protect_create_loc_conf(ngx_conf_t *cf);
static char *ngx_http_app_protect_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child);
static ngx_int_t ngx_http_app_protect_init(ngx_conf_t *cf);

#define NGX_HTTP_AP_CONTEXTS (NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF)

static ngx_command_t ngx_http_app_protect_commands[] = {
    { ngx_string("app_protect_enable"), NGX_HTTP_AP_CONTEXTS|NGX_CONF_FLAG,
      ngx_conf_set_flag_slot, NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_app_protect_loc_conf_t, enable), NULL },
    { ngx_string("app_protect_policy_file"), NGX_HTTP_AP_CONTEXTS|NGX_CONF_TAKE1,
      ngx_http_app_protect_policy_file, NGX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { ngx_string("app_protect_security_log_enable"), NGX_HTTP_AP_CONTEXTS|NGX_CONF_FLAG,
      ngx_conf_set_flag_slot, NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_app_protect_loc_conf_t, log_enable), NULL },
    { ngx_string("app_protect_security_log"), NGX_HTTP_AP_CONTEXTS|NGX_CONF_TAKE2,
      ngx_http_app_protect_security_log, NGX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { ngx_string("app_protect_enforcer_address"), NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE1,
      ngx_conf_set_str_slot, NGX_HTTP_MAIN_CONF_OFFSET,
      offsetof(ngx_http_app_protect_main_conf_t, enforcer_address), NULL },
    ngx_null_command
};

static ngx_http_module_t ngx_http_app_protect_module_ctx = {
    NULL, ngx_http_app_protect_init,
    ngx_http_app_protect_create_main_conf, NULL,
    NULL, NULL,
    ngx_http_app_protect_create_loc_conf, ngx_http_app_protect_merge_loc_conf
};

ngx_module_t ngx_http_app_protect_module = {
    NGX_MODULE_V1, &ngx_http_app_protect_module_ctx, ngx_http_app_protect_commands,
    NGX_HTTP_MODULE, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NGX_MODULE_V1_PADDING
};

/* bundle_exists refuses a bundle path that is not an absolute, existing file. */
static char *
bundle_exists(ngx_conf_t *cf, ngx_str_t *path)
{
    ngx_file_info_t fi;
    ngx_fd_t fd;
    u_char *z, head[65];
    ssize_t n;

    if (path->len == 0 || path->data[0] != '/') {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "app_protect bundle \"%V\" must be an absolute path", path);
        return NGX_CONF_ERROR;
    }
    z = ngx_pnalloc(cf->pool, path->len + 1);
    if (z == NULL) {
        return NGX_CONF_ERROR;
    }
    ngx_cpystrn(z, path->data, path->len + 1);
    if (ngx_file_info(z, &fi) == NGX_FILE_ERROR || !ngx_is_file(&fi)) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, ngx_errno, "app_protect bundle \"%s\" not found", z);
        return NGX_CONF_ERROR;
    }
    fd = ngx_open_file(z, NGX_FILE_RDONLY, NGX_FILE_OPEN, 0);
    if (fd == NGX_INVALID_FILE) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, ngx_errno, "app_protect bundle \"%s\" cannot be read", z);
        return NGX_CONF_ERROR;
    }
    n = read(fd, head, sizeof(head) - 1);
    ngx_close_file(fd);
    if (n > 0) {
        head[n] = '\0';
        if (ngx_strstr(head, "INCOMPATIBLE") != NULL) {
            ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "app_protect bundle \"%s\" was compiled for another App Protect version", z);
            return NGX_CONF_ERROR;
        }
    }
    return NGX_CONF_OK;
}

static char *
ngx_http_app_protect_policy_file(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_app_protect_loc_conf_t *lcf = conf;
    ngx_str_t *value = cf->args->elts;

    if (lcf->policy_file.data != NULL) {
        return "is duplicate";
    }
    lcf->policy_file = value[1];
    return bundle_exists(cf, &value[1]);
}

static char *
ngx_http_app_protect_security_log(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_app_protect_loc_conf_t *lcf = conf;
    ngx_str_t *value = cf->args->elts, *log;

    if (lcf->logs == NULL) {
        lcf->logs = ngx_array_create(cf->pool, 2, sizeof(ngx_str_t) * 2);
        if (lcf->logs == NULL) {
            return NGX_CONF_ERROR;
        }
    }
    log = ngx_array_push(lcf->logs);
    if (log == NULL) {
        return NGX_CONF_ERROR;
    }
    log[0] = value[1];
    log[1] = value[2];
    if (!(value[2].len == 6 && ngx_strncmp(value[2].data, "stderr", 6) == 0)
        && !(value[2].len > 14 && ngx_strncmp(value[2].data, "syslog:server=", 14) == 0)
        && value[2].data[0] != '/')
    {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "app_protect_security_log destination \"%V\" must be stderr, a file path or syslog:server=host:port", &value[2]);
        return NGX_CONF_ERROR;
    }
    return bundle_exists(cf, &value[1]);
}

static void *
ngx_http_app_protect_create_main_conf(ngx_conf_t *cf)
{
    return ngx_pcalloc(cf->pool, sizeof(ngx_http_app_protect_main_conf_t));
}

static void *
ngx_http_app_protect_create_loc_conf(ngx_conf_t *cf)
{
    ngx_http_app_protect_loc_conf_t *conf = ngx_pcalloc(cf->pool, sizeof(ngx_http_app_protect_loc_conf_t));

    if (conf == NULL) {
        return NULL;
    }
    conf->enable = NGX_CONF_UNSET;
    conf->log_enable = NGX_CONF_UNSET;
    return conf;
}

static char *
ngx_http_app_protect_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child)
{
    ngx_http_app_protect_loc_conf_t *prev = parent, *conf = child;

    ngx_conf_merge_value(conf->enable, prev->enable, 0);
    ngx_conf_merge_value(conf->log_enable, prev->log_enable, 0);
    ngx_conf_merge_str_value(conf->policy_file, prev->policy_file, "");
    if (conf->logs == NULL) {
        conf->logs = prev->logs;
    }
    return NGX_CONF_OK;
}

/* security_log writes one blocked request's line to a destination. Errors
 * are logged and otherwise ignored: the request is blocked regardless. */
static void
security_log(ngx_http_request_t *r, ngx_http_app_protect_loc_conf_t *lcf, ngx_str_t *profile, ngx_str_t *dest)
{
    u_char line[2048], *last, host[256], *colon, *port;
    ngx_fd_t fd;
    struct addrinfo hints, *ai;
    int s;
    size_t n;

    last = ngx_snprintf(line, sizeof(line) - 1, "gatewall-test-waf: blocked uri=%V policy=%V profile=%V\n",
                        &r->uri, &lcf->policy_file, profile);
    n = last - line;
    if (dest->len == 6 && ngx_strncmp(dest->data, "stderr", 6) == 0) {
        (void) ngx_write_fd(ngx_stderr, line, n);
        return;
    }
    if (dest->len > 14 && ngx_strncmp(dest->data, "syslog:server=", 14) == 0) {
        if (dest->len - 14 >= sizeof(host)) {
            return;
        }
        ngx_cpystrn(host, dest->data + 14, dest->len - 14 + 1);
        colon = (u_char *) ngx_strchr(host, ':');
        if (colon == NULL) {
            return;
        }
        *colon = '\0';
        port = colon + 1;
        ngx_memzero(&hints, sizeof(hints));
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_DGRAM;
        if (getaddrinfo((char *) host, (char *) port, &hints, &ai) != 0) {
            ngx_log_error(NGX_LOG_ERR, r->connection->log, 0, "app_protect test double: cannot resolve syslog server \"%s\"", host);
            return;
        }
        s = socket(ai->ai_family, SOCK_DGRAM, 0);
        if (s != -1) {
            /* RFC 3164's PRI: facility local0 (16), severity info (6). */
            u_char msg[2100];
            u_char *end = ngx_snprintf(msg, sizeof(msg), "<134>%*s", n, line);
            (void) sendto(s, msg, end - msg, 0, ai->ai_addr, ai->ai_addrlen);
            close(s);
        }
        freeaddrinfo(ai);
        return;
    }
    {
        u_char path[1024];
        if (dest->len >= sizeof(path)) {
            return;
        }
        ngx_cpystrn(path, dest->data, dest->len + 1);
        fd = ngx_open_file(path, NGX_FILE_APPEND, NGX_FILE_CREATE_OR_OPEN, 0644);
        if (fd == NGX_INVALID_FILE) {
            ngx_log_error(NGX_LOG_ERR, r->connection->log, ngx_errno, "app_protect test double: cannot open \"%s\"", path);
            return;
        }
        (void) ngx_write_fd(fd, line, n);
        ngx_close_file(fd);
    }
}

static ngx_int_t
ngx_http_app_protect_handler(ngx_http_request_t *r)
{
    ngx_http_app_protect_loc_conf_t *lcf;
    ngx_list_part_t *part;
    ngx_table_elt_t *h, *p;
    ngx_uint_t i;
    static const char attack[] = "x-gatewall-test-attack";

    lcf = ngx_http_get_module_loc_conf(r, ngx_http_app_protect_module);
    if (!lcf->enable || r->main != r) {
        return NGX_DECLINED;
    }
    for (part = &r->headers_in.headers.part; part; part = part->next) {
        h = part->elts;
        for (i = 0; i < part->nelts; i++) {
            if (h[i].key.len == sizeof(attack) - 1
                && ngx_strncasecmp(h[i].key.data, (u_char *) attack, sizeof(attack) - 1) == 0)
            {
                p = ngx_list_push(&r->headers_out.headers);
                if (p == NULL) {
                    return NGX_HTTP_INTERNAL_SERVER_ERROR;
                }
                p->hash = 1;
                ngx_str_set(&p->key, "X-Gatewall-Test-Policy");
                p->value = lcf->policy_file;
                if (lcf->log_enable && lcf->logs != NULL) {
                    ngx_str_t *log = lcf->logs->elts;
                    ngx_uint_t k;
                    for (k = 0; k < lcf->logs->nelts; k++) {
                        security_log(r, lcf, &log[2 * k], &log[2 * k + 1]);
                    }
                }
                return NGX_HTTP_FORBIDDEN;
            }
        }
    }
    return NGX_DECLINED;
}

static ngx_int_t
ngx_http_app_protect_init(ngx_conf_t *cf)
{
    ngx_http_handler_pt *h;
    ngx_http_core_main_conf_t *cmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module);

    h = ngx_array_push(&cmcf->phases[NGX_HTTP_ACCESS_PHASE].handlers);
    if (h == NULL) {
        return NGX_ERROR;
    }
    *h = ngx_http_app_protect_handler;
    return NGX_OK;
}
