/*
 * The domains WebFetch may reach. Each entry allows the domain itself and every subdomain
 * ("docs.rs" allows "docs.rs" and "foo.docs.rs", not "evildocs.rs" or "docs.rs.evil.com").
 *
 * Entries are lowercase DNS names in ASCII (write internationalised names in their
 * punycode "xn--" form), without scheme, port, path or trailing dot. IP addresses cannot be
 * listed: the guard denies every IP-address host.
 *
 * To change the list, edit it and rebuild the plugin (`warden build plugins/url-guard`).
 */
#ifndef URL_GUARD_ALLOWLIST_H
#define URL_GUARD_ALLOWLIST_H

static const char *const URL_GUARD_ALLOWLIST[] = {
    "docs.rs",
    "crates.io",
    "rust-lang.org",
    "developer.mozilla.org",
    "docs.python.org",
    "wikipedia.org",
};

#endif
