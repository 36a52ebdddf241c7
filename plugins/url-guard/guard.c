/*
 * url-guard: WebFetch may reach only the domains in allowlist.h (and their subdomains).
 *
 * The URL is read strictly: anything a URL parser could read two ways is denied rather than
 * guessed at (backslashes, percent-encoded or non-ASCII hosts, IP addresses, whitespace).
 */
#include "allowlist.h"
#include "warden.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define ALLOWLIST_LEN (sizeof URL_GUARD_ALLOWLIST / sizeof URL_GUARD_ALLOWLIST[0])
#define HOST_MAX 253

/* "docs.rs, crates.io, ..." for reasons. */
static const char *allowlist_text(void) {
    const char *s = "";
    for (size_t i = 0; i < ALLOWLIST_LEN; i++)
        s = warden_cat(s, i ? ", " : "", URL_GUARD_ALLOWLIST[i], NULL);
    return s;
}

static char lower(char c) { return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool is_hex(char c) { return is_digit(c) || (lower(c) >= 'a' && lower(c) <= 'f'); }

/* Whether the label s[0..n) is a number as the WHATWG URL parser reads IPv4 parts
 * (decimal, or 0x hex): a host ending in one is parsed as an IPv4 address. */
static bool numeric_label(const char *s, size_t n) {
    if (n >= 2 && s[0] == '0' && lower(s[1]) == 'x') {
        for (size_t i = 2; i < n; i++)
            if (!is_hex(s[i]))
                return false;
        return true;
    }
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!is_digit(s[i]))
            return false;
    return true;
}

/*
 * Extracts the lowercase host of an http(s) URL into host[HOST_MAX + 1]. Returns NULL on
 * success, or why the URL is refused.
 */
static const char *url_host(const char *url, char *host) {
    for (const char *p = url; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c <= 0x20 || c == 0x7F)
            return "the URL contains whitespace or control characters";
        if (c == '\\')
            return "the URL contains a backslash, which URL parsers read differently";
    }

    /* scheme ":" */
    const char *colon = strchr(url, ':');
    if (!colon || colon == url || !is_alpha(url[0]))
        return "not an absolute URL (it needs http:// or https://)";
    size_t scheme_len = (size_t)(colon - url);
    for (size_t i = 0; i < scheme_len; i++) {
        char c = url[i];
        if (!is_alpha(c) && !is_digit(c) && c != '+' && c != '-' && c != '.')
            return "not an absolute URL (it needs http:// or https://)";
    }
    char scheme[21] = {0};
    for (size_t i = 0; i < scheme_len && i < sizeof scheme - 1; i++)
        scheme[i] = lower(url[i]);
    if (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)
        return warden_cat("scheme ", scheme, scheme_len >= sizeof scheme ? "...:" : ":",
                          " is not http or https", NULL);

    /* "//" authority, ending at the path, query or fragment */
    if (colon[1] != '/' || colon[2] != '/')
        return "malformed URL: the scheme must be followed by //";
    const char *auth = colon + 3;
    size_t auth_len = strcspn(auth, "/?#");

    /* userinfo "@": the host follows the last @ */
    const char *hp = auth;
    for (size_t i = 0; i < auth_len; i++)
        if (auth[i] == '@')
            hp = auth + i + 1;
    size_t hp_len = auth_len - (size_t)(hp - auth);

    if (hp_len > 0 && hp[0] == '[')
        return "the host is an IP address literal";

    /* ":port": digits only, at most 65535; an empty port means the default */
    size_t host_len = hp_len;
    const char *pc = memchr(hp, ':', hp_len);
    if (pc) {
        host_len = (size_t)(pc - hp);
        size_t port_len = hp_len - host_len - 1;
        unsigned long port = 0;
        for (size_t i = 0; i < port_len; i++) {
            char c = pc[1 + i];
            if (!is_digit(c))
                return "the port is not a number";
            port = port * 10 + (unsigned long)(c - '0');
            if (port > 65535)
                return "the port is out of range";
        }
    }

    if (host_len == 0)
        return "the URL has no host";
    if (host_len > HOST_MAX + 1)
        return "the host name is too long";
    for (size_t i = 0; i < host_len; i++) {
        char c = hp[i];
        if (c == '%')
            return "the host is percent-encoded";
        if ((unsigned char)c >= 0x80)
            return "the host is not ASCII (write it in punycode, xn--...)";
        if (!is_alpha(c) && !is_digit(c) && c != '-' && c != '_' && c != '.') {
            char bad[2] = {c, '\0'};
            return warden_cat("the host contains the character '", bad, "'", NULL);
        }
        host[i] = lower(c);
    }
    if (host[host_len - 1] == '.')
        host_len--; /* "docs.rs." is "docs.rs" */
    host[host_len] = '\0';
    if (host_len == 0 || host_len > HOST_MAX)
        return "the URL has no valid host";
    if (host[0] == '.' || strstr(host, ".."))
        return "the host has an empty label";

    const char *last = strrchr(host, '.');
    last = last ? last + 1 : host;
    if (numeric_label(last, strlen(last)))
        return "the host is an IP address";
    return NULL;
}

/* Whether host is a listed domain or a subdomain of one. */
static const char *allowed_by(const char *host) {
    size_t hn = strlen(host);
    for (size_t i = 0; i < ALLOWLIST_LEN; i++) {
        const char *d = URL_GUARD_ALLOWLIST[i];
        size_t dn = strlen(d);
        if (hn == dn && memcmp(host, d, dn) == 0)
            return d;
        if (hn > dn && host[hn - dn - 1] == '.' && memcmp(host + hn - dn, d, dn) == 0)
            return d;
    }
    return NULL;
}

void warden_hook(const warden_event *event, warden_result *result) {
    if (strcmp(event->name, "PreToolUse") != 0)
        return;
    const char *tool = warden_tool_name(event);
    if (!tool || strcmp(tool, "WebFetch") != 0)
        return;

    const char *url = warden_url(event);
    if (!url) {
        warden_deny(result, warden_cat("url-guard: this WebFetch call has no url string; "
                                       "allowed domains: ", allowlist_text(), NULL));
        return;
    }
    char host[HOST_MAX + 2];
    const char *why = url_host(url, host);
    if (why) {
        warden_deny(result, warden_cat("url-guard: WebFetch refused, ", why,
                                       "; only http(s) URLs to these domains (and their "
                                       "subdomains) are allowed: ", allowlist_text(), NULL));
        return;
    }
    const char *by = allowed_by(host);
    if (by) {
        warden_allow(result, warden_cat("url-guard: ", host, " is on the allowlist (", by, ")", NULL));
        return;
    }
    warden_deny(result, warden_cat("url-guard: WebFetch to ", host, " is not allowed; allowed "
                                   "domains (and their subdomains): ", allowlist_text(), NULL));
}
