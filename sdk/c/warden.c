/*
 * The world-independent part of Warden's C SDK: a strict JSON reader good enough to pull
 * string fields out of an event, the hook result setters, and per-call memory.
 */
#include "warden.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Per-call memory ----------------------------------------------------------------------
 * Strings the helpers return live until the call ends: warden__call_end() frees them all.
 * Each call normally runs in a fresh instance, but the host may reuse one, so nothing leaks. */

typedef union call_block {
    union call_block *next;
    max_align_t align;
} call_block;

static call_block *call_blocks;

static char *call_alloc(size_t n) {
    if (n > SIZE_MAX - sizeof(call_block))
        return NULL;
    call_block *b = malloc(sizeof(call_block) + n);
    if (!b)
        return NULL;
    b->next = call_blocks;
    call_blocks = b;
    return (char *)(b + 1);
}

/* Cache of the last document found valid, so repeated lookups do not rescan it. */
static const char *valid_ptr;
static size_t valid_len;

void warden__call_end(void) {
    while (call_blocks) {
        call_block *next = call_blocks->next;
        free(call_blocks);
        call_blocks = next;
    }
    valid_ptr = NULL;
    valid_len = 0;
}

/* ---- UTF-8 ----------------------------------------------------------------------------- */

/* Length of the well-formed UTF-8 sequence at s[0..n), or 0 if it is not well-formed. */
static size_t utf8_seq(const unsigned char *s, size_t n) {
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0;
        if (c == 0xED)
            hi = 0x9F; /* no UTF-16 surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;
        if (c == 0xF4)
            hi = 0x8F;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t k = 2; k < len; k++)
        if (s[k] < 0x80 || s[k] > 0xBF)
            return 0;
    return len;
}

char *warden__utf8_dup(const char *str, size_t len) {
    const unsigned char *s = (const unsigned char *)str;
    /* Each invalid byte becomes three. */
    if (len > (SIZE_MAX - 1) / 3)
        return NULL;
    char *out = malloc(len * 3 + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        size_t k = utf8_seq(s + i, len - i);
        if (k == 0) {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i += 1;
        } else {
            memcpy(out + o, s + i, k);
            o += k;
            i += k;
        }
    }
    out[o] = '\0';
    return out;
}

static void put_utf8(char *out, size_t *o, uint32_t cp) {
    if (cp < 0x80) {
        out[(*o)++] = (char)cp;
    } else if (cp < 0x800) {
        out[(*o)++] = (char)(0xC0 | (cp >> 6));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out[(*o)++] = (char)(0xE0 | (cp >> 12));
        out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    } else {
        out[(*o)++] = (char)(0xF0 | (cp >> 18));
        out[(*o)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    }
}

/* ---- JSON (RFC 8259, strict) ------------------------------------------------------------- */

typedef struct {
    const char *s;
    size_t n;
    size_t i;
} jp;

static void ws(jp *p) {
    while (p->i < p->n) {
        char c = p->s[p->i];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        p->i++;
    }
}

static int hexval(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Four hex digits at s[i..], or -1. */
static long hex4(const jp *p, size_t i) {
    if (i > p->n || p->n - i < 4)
        return -1;
    long v = 0;
    for (int k = 0; k < 4; k++) {
        int h = hexval(p->s[i + k]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

/* Scans the string starting at p->i (a '"'), leaving p->i after its closing quote. With
 * `out`, decodes it into a buffer from call_alloc() (NUL-terminated; *out_len excludes the
 * NUL). Escapes never make text longer, so the raw span bounds the decoded size. Lone
 * surrogates decode as U+FFFD. */
static bool jstring(jp *p, char **out, size_t *out_len) {
    if (p->i >= p->n || p->s[p->i] != '"')
        return false;
    size_t start = ++p->i;
    /* First pass: find the end and check the escapes. */
    for (;;) {
        if (p->i >= p->n)
            return false;
        unsigned char c = (unsigned char)p->s[p->i];
        if (c == '"')
            break;
        if (c < 0x20)
            return false;
        if (c == '\\') {
            if (p->i + 1 >= p->n)
                return false;
            char e = p->s[p->i + 1];
            if (e == 'u') {
                if (hex4(p, p->i + 2) < 0)
                    return false;
                p->i += 6;
            } else if (strchr("\"\\/bfnrt", e) && e != '\0') {
                p->i += 2;
            } else {
                return false;
            }
        } else {
            p->i++;
        }
    }
    size_t end = p->i++; /* past the closing quote */
    if (!out)
        return true;
    char *buf = call_alloc(end - start + 1);
    if (!buf)
        return false;
    size_t o = 0;
    for (size_t i = start; i < end;) {
        char c = p->s[i];
        if (c != '\\') {
            buf[o++] = c;
            i++;
            continue;
        }
        char e = p->s[i + 1];
        i += 2;
        switch (e) {
        case 'b': buf[o++] = '\b'; break;
        case 'f': buf[o++] = '\f'; break;
        case 'n': buf[o++] = '\n'; break;
        case 'r': buf[o++] = '\r'; break;
        case 't': buf[o++] = '\t'; break;
        case 'u': {
            uint32_t cp = (uint32_t)hex4(p, i);
            i += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                long lo = (i + 1 < end && p->s[i] == '\\' && p->s[i + 1] == 'u') ? hex4(p, i + 2) : -1;
                if (lo >= 0xDC00 && lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
                    i += 6;
                } else {
                    cp = 0xFFFD;
                }
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                cp = 0xFFFD;
            }
            put_utf8(buf, &o, cp);
            break;
        }
        default: buf[o++] = e; break; /* " \ / */
        }
    }
    buf[o] = '\0';
    *out = buf;
    *out_len = o;
    return true;
}

static bool jnumber(jp *p) {
    size_t i = p->i;
    const char *s = p->s;
    size_t n = p->n;
#define DIGIT(k) ((k) < n && s[k] >= '0' && s[k] <= '9')
    if (i < n && s[i] == '-')
        i++;
    if (i < n && s[i] == '0') {
        i++;
    } else if (DIGIT(i)) {
        while (DIGIT(i))
            i++;
    } else {
        return false;
    }
    if (i < n && s[i] == '.') {
        i++;
        if (!DIGIT(i))
            return false;
        while (DIGIT(i))
            i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (!DIGIT(i))
            return false;
        while (DIGIT(i))
            i++;
    }
#undef DIGIT
    p->i = i;
    return true;
}

static bool jliteral(jp *p, const char *word) {
    size_t k = strlen(word);
    if (p->n - p->i < k || memcmp(p->s + p->i, word, k) != 0)
        return false;
    p->i += k;
    return true;
}

/* A member's key and the colon after it. */
static bool jkey(jp *p, char **key, size_t *key_len) {
    ws(p);
    if (!jstring(p, key, key_len))
        return false;
    ws(p);
    if (p->i >= p->n || p->s[p->i] != ':')
        return false;
    p->i++;
    return true;
}

/* Skips one value starting at p->i (after whitespace), checking its syntax. Iterative, with
 * the open containers on a heap stack, so nesting depth costs memory, not C stack. */
static bool skip_value(jp *p) {
    char small[64];
    char *stack = small;
    size_t cap = sizeof small, depth = 0;
    bool ok = false;

    for (;;) {
        /* A value. */
        ws(p);
        if (p->i >= p->n)
            goto done;
        char c = p->s[p->i];
        if (c == '{' || c == '[') {
            if (depth == cap) {
                size_t ncap = cap * 2;
                char *ns = malloc(ncap);
                if (!ns)
                    goto done;
                memcpy(ns, stack, depth);
                if (stack != small)
                    free(stack);
                stack = ns;
                cap = ncap;
            }
            stack[depth++] = c;
            p->i++;
            ws(p);
            if (p->i < p->n && p->s[p->i] == (c == '{' ? '}' : ']')) {
                p->i++;
                depth--;
            } else {
                if (c == '{' && !jkey(p, NULL, NULL))
                    goto done;
                continue; /* the first element or member value */
            }
        } else if (c == '"') {
            if (!jstring(p, NULL, NULL))
                goto done;
        } else if (c == 't') {
            if (!jliteral(p, "true"))
                goto done;
        } else if (c == 'f') {
            if (!jliteral(p, "false"))
                goto done;
        } else if (c == 'n') {
            if (!jliteral(p, "null"))
                goto done;
        } else if (!jnumber(p)) {
            goto done;
        }
        /* After a complete value: close containers or move to the next element. */
        for (;;) {
            if (depth == 0) {
                ok = true;
                goto done;
            }
            ws(p);
            if (p->i >= p->n)
                goto done;
            char top = stack[depth - 1];
            c = p->s[p->i];
            if (c == ',') {
                p->i++;
                if (top == '{' && !jkey(p, NULL, NULL))
                    goto done;
                break; /* the next value */
            }
            if (c != (top == '{' ? '}' : ']'))
                goto done;
            p->i++;
            depth--;
        }
    }
done:
    if (stack != small)
        free(stack);
    return ok;
}

/* Whether `json` is one JSON object and nothing else. `cache`: the text stays the same for
 * the whole call (the event input), so a second lookup need not check it again. */
static bool valid_object(const char *json, size_t len, bool cache) {
    if (cache && json && json == valid_ptr && len == valid_len)
        return true;
    jp p = {json, len, 0};
    ws(&p);
    if (p.i >= p.n || p.s[p.i] != '{')
        return false;
    if (!skip_value(&p))
        return false;
    ws(&p);
    if (p.i != p.n)
        return false;
    if (cache) {
        valid_ptr = json;
        valid_len = len;
    }
    return true;
}

/* In the object at p->i, the start of the last member named key[0..key_len). */
static bool find_member(jp *p, const char *key, size_t key_len, size_t *at) {
    ws(p);
    if (p->i >= p->n || p->s[p->i] != '{')
        return false;
    p->i++;
    ws(p);
    if (p->i < p->n && p->s[p->i] == '}')
        return false;
    bool found = false;
    for (;;) {
        /* Keys are compared decoded, so "tool\u005finput" is tool_input; only keys that
         * could match are decoded (an unescaped key's raw length is its length + 2). */
        ws(p);
        size_t key_start = p->i;
        jp probe = *p;
        if (!jstring(&probe, NULL, NULL))
            return false;
        size_t raw_len = probe.i - key_start;
        bool escaped = memchr(p->s + key_start, '\\', raw_len) != NULL;
        char *k = NULL;
        size_t klen = 0;
        if (escaped || raw_len == key_len + 2) {
            if (!jkey(p, &k, &klen))
                return false;
        } else if (!jkey(p, NULL, NULL)) {
            return false;
        }
        ws(p);
        size_t value_at = p->i;
        if (!skip_value(p))
            return false;
        if (k && klen == key_len && memcmp(k, key, key_len) == 0) {
            *at = value_at; /* the last duplicate wins, as in JSON.parse */
            found = true;
        }
        ws(p);
        if (p->i < p->n && p->s[p->i] == ',') {
            p->i++;
            continue;
        }
        if (p->i < p->n && p->s[p->i] == '}')
            return found;
        return false;
    }
}

static const char *lookup_raw(const char *json, size_t len, const char *path, size_t *out_len,
                              bool cache) {
    if (!json || !path || !valid_object(json, len, cache))
        return NULL;
    jp p = {json, len, 0};
    ws(&p);
    for (const char *seg = path;;) {
        const char *dot = strchr(seg, '.');
        size_t seg_len = dot ? (size_t)(dot - seg) : strlen(seg);
        size_t at;
        if (!find_member(&p, seg, seg_len, &at))
            return NULL;
        p.i = at;
        if (!dot)
            break;
        seg = dot + 1;
    }
    size_t start = p.i;
    if (!skip_value(&p))
        return NULL;
    if (out_len)
        *out_len = p.i - start;
    return json + start;
}

const char *warden_json_raw(const char *json, size_t len, const char *path, size_t *out_len) {
    return lookup_raw(json, len, path, out_len, false);
}

static const char *lookup_str(const char *json, size_t len, const char *path, bool cache) {
    size_t raw_len;
    const char *raw = lookup_raw(json, len, path, &raw_len, cache);
    if (!raw || raw[0] != '"')
        return NULL;
    jp p = {raw, raw_len, 0};
    char *out;
    size_t out_len;
    if (!jstring(&p, &out, &out_len))
        return NULL;
    if (strlen(out) != out_len)
        return NULL; /* contains U+0000: not representable as a C string */
    return out;
}

const char *warden_json_str(const char *json, size_t len, const char *path) {
    return lookup_str(json, len, path, false);
}

const char *warden_json_quote(const char *s) {
    if (!s)
        return NULL;
    char *clean = warden__utf8_dup(s, strlen(s));
    if (!clean)
        return NULL;
    size_t n = strlen(clean);
    char *out = n <= (SIZE_MAX - 3) / 6 ? call_alloc(n * 6 + 3) : NULL;
    if (!out) {
        free(clean);
        return NULL;
    }
    size_t o = 0;
    out[o++] = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)clean[i];
        if (c == '"' || c == '\\') {
            out[o++] = '\\';
            out[o++] = (char)c;
        } else if (c == '\n') {
            out[o++] = '\\';
            out[o++] = 'n';
        } else if (c == '\t') {
            out[o++] = '\\';
            out[o++] = 't';
        } else if (c == '\r') {
            out[o++] = '\\';
            out[o++] = 'r';
        } else if (c < 0x20 || c == 0x7F) {
            static const char hex[] = "0123456789abcdef";
            memcpy(out + o, "\\u00", 4);
            o += 4;
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        } else {
            out[o++] = (char)c;
        }
    }
    out[o++] = '"';
    out[o] = '\0';
    free(clean);
    return out;
}

const char *warden_cat(const char *first, ...) {
    size_t total = 0;
    va_list ap;
    va_start(ap, first);
    for (const char *s = first; s; s = va_arg(ap, const char *)) {
        size_t n = strlen(s);
        if (n > SIZE_MAX - 1 - total) {
            va_end(ap);
            return NULL;
        }
        total += n;
    }
    va_end(ap);
    char *out = call_alloc(total + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    va_start(ap, first);
    for (const char *s = first; s; s = va_arg(ap, const char *)) {
        size_t n = strlen(s);
        memcpy(out + o, s, n);
        o += n;
    }
    va_end(ap);
    out[o] = '\0';
    return out;
}

static const char *vfmt(const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return NULL;
    char *out = call_alloc((size_t)n + 1);
    if (!out)
        return NULL;
    vsnprintf(out, (size_t)n + 1, fmt, ap);
    return out;
}

const char *warden_fmt(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    const char *s = vfmt(fmt, ap);
    va_end(ap);
    return s;
}

/* ---- Event accessors -------------------------------------------------------------------- */

const char *warden_str(const warden_event *e, const char *path) {
    return e ? lookup_str(e->input, e->input_len, path, true) : NULL;
}

const char *warden_raw(const warden_event *e, const char *path, size_t *len) {
    return e ? lookup_raw(e->input, e->input_len, path, len, true) : NULL;
}

const char *warden_tool_name(const warden_event *e) { return warden_str(e, "tool_name"); }
const char *warden_command(const warden_event *e) { return warden_str(e, "tool_input.command"); }
const char *warden_url(const warden_event *e) { return warden_str(e, "tool_input.url"); }
const char *warden_cwd(const warden_event *e) { return warden_str(e, "cwd"); }

const char *warden_file_path(const warden_event *e) {
    const char *p = warden_str(e, "tool_input.file_path");
    return p ? p : warden_str(e, "tool_input.notebook_path");
}

/* ---- Result setters ---------------------------------------------------------------------- */

/* Replaces *slot with a clean copy of s (NULL clears it). Out of memory traps: silently
 * dropping a deny would be worse. */
static void set(char **slot, const char *s) {
    free(*slot);
    *slot = NULL;
    if (!s)
        return;
    *slot = warden__utf8_dup(s, strlen(s));
    if (!*slot)
        abort();
}

void warden__result_init(warden_result *r) {
    memset(r, 0, sizeof *r);
    r->decision = WARDEN_NONE;
    r->continue_ = true;
}

void warden__result_free(warden_result *r) {
    free(r->reason);
    free(r->additional_context);
    free(r->updated_input);
    free(r->system_message);
    free(r->stop_reason);
    warden__result_init(r);
}

static void decide(warden_result *r, warden_decision d, const char *reason) {
    r->decision = d;
    set(&r->reason, reason);
}

void warden_none(warden_result *r) { decide(r, WARDEN_NONE, NULL); }
void warden_allow(warden_result *r, const char *reason) { decide(r, WARDEN_ALLOW, reason); }
void warden_deny(warden_result *r, const char *reason) { decide(r, WARDEN_DENY, reason); }
void warden_ask(warden_result *r, const char *reason) { decide(r, WARDEN_ASK, reason); }
void warden_defer(warden_result *r) { decide(r, WARDEN_DEFER, NULL); }
void warden_block(warden_result *r, const char *reason) { decide(r, WARDEN_BLOCK, reason); }

void warden_decidef(warden_result *r, warden_decision d, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    const char *s = vfmt(fmt, ap);
    va_end(ap);
    if (!s)
        abort();
    decide(r, d, s);
}

void warden_add_context(warden_result *r, const char *text) { set(&r->additional_context, text); }
void warden_update_input(warden_result *r, const char *json) { set(&r->updated_input, json); }
void warden_system_message(warden_result *r, const char *text) { set(&r->system_message, text); }
void warden_suppress_output(warden_result *r) { r->suppress_output = true; }

void warden_stop(warden_result *r, const char *reason) {
    r->continue_ = false;
    set(&r->stop_reason, reason);
}

/* ---- Tool result setters ------------------------------------------------------------------ */

void warden__tool_result_init(warden_tool_result *r) {
    memset(r, 0, sizeof *r);
    r->status = WARDEN_TOOL_OK;
}

void warden__tool_result_free(warden_tool_result *r) {
    free(r->text);
    free(r->structured);
    warden__tool_result_init(r);
}

static void tool_set(warden_tool_result *r, warden_tool_status status, const char *text) {
    r->status = status;
    set(&r->text, text);
    if (status != WARDEN_TOOL_OK)
        set(&r->structured, NULL);
}

void warden_tool_ok(warden_tool_result *r, const char *content) { tool_set(r, WARDEN_TOOL_OK, content); }
void warden_tool_structured(warden_tool_result *r, const char *json) { set(&r->structured, json); }
void warden_tool_invalid_input(warden_tool_result *r, const char *message) {
    tool_set(r, WARDEN_TOOL_INVALID_INPUT, message);
}
void warden_tool_denied(warden_tool_result *r, const char *message) { tool_set(r, WARDEN_TOOL_DENIED, message); }
void warden_tool_failed(warden_tool_result *r, const char *message) { tool_set(r, WARDEN_TOOL_FAILED, message); }
