/*
 * Native tests of warden.c (the JSON reader, UTF-8 repair and result setters); no wasm needed:
 *
 *     cc -std=c11 -Wall -Wextra -fsanitize=address,undefined -I sdk/c \
 *         -o /tmp/warden_test sdk/c/tests/warden_test.c sdk/c/warden.c && /tmp/warden_test
 */
#include "warden.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                                     \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);    \
            failures++;                                                                 \
        }                                                                               \
    } while (0)

static const char *get(const char *json, const char *path) {
    return warden_json_str(json, strlen(json), path);
}

static int eq(const char *a, const char *b) {
    return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

static void strings(void) {
    const char *ev =
        "{\"session_id\":\"s\",\"cwd\":\"/p\",\"tool_name\":\"Bash\","
        "\"tool_input\":{\"command\":\"ls \\\"a b\\\"\",\"n\":3},\"extra\":[1,{\"x\":null}]}";
    CHECK(eq(get(ev, "tool_name"), "Bash"));
    CHECK(eq(get(ev, "cwd"), "/p"));
    CHECK(eq(get(ev, "tool_input.command"), "ls \"a b\""));
    CHECK(get(ev, "tool_input.n") == NULL);       /* a number, not a string */
    CHECK(get(ev, "tool_input.missing") == NULL);
    CHECK(get(ev, "tool_name.x") == NULL);        /* not an object */
    CHECK(get(ev, "extra") == NULL);
    size_t n;
    const char *raw = warden_json_raw(ev, strlen(ev), "tool_input.n", &n);
    CHECK(raw && n == 1 && raw[0] == '3');
    raw = warden_json_raw(ev, strlen(ev), "extra", &n);
    CHECK(raw && n == strlen("[1,{\"x\":null}]"));

    /* Escapes, \u, surrogate pairs, lone surrogates. */
    CHECK(eq(get("{\"a\":\"\\n\\t\\/\\\\\\b\\f\\r\"}", "a"), "\n\t/\\\b\f\r"));
    CHECK(eq(get("{\"a\":\"\\u00e9\\u2713 \\u65e5\"}", "a"), "\xC3\xA9\xE2\x9C\x93 \xE6\x97\xA5"));
    CHECK(eq(get("{\"a\":\"\\ud83d\\ude00\"}", "a"), "\xF0\x9F\x98\x80"));
    CHECK(eq(get("{\"a\":\"\\ud83dx\"}", "a"), "\xEF\xBF\xBDx"));
    CHECK(eq(get("{\"a\":\"\\ude00\"}", "a"), "\xEF\xBF\xBD"));
    CHECK(eq(get("{\"a\":\"\\ud83d\\u0041\"}", "a"), "\xEF\xBF\xBD" "A"));
    CHECK(get("{\"a\":\"x\\u0000y\"}", "a") == NULL); /* NUL: not a C string */
    CHECK(eq(get("{\"a\":\"h\xC3\xA9llo \xE2\x9C\x93\"}", "a"), "h\xC3\xA9llo \xE2\x9C\x93"));

    /* Escaped keys match decoded; the last duplicate wins. */
    CHECK(eq(get("{\"tool\\u005finput\":{\"url\":\"u\"}}", "tool_input.url"), "u"));
    CHECK(eq(get("{\"a\":\"1\",\"a\":\"2\"}", "a"), "2"));
    CHECK(eq(get("{\"t\":{\"u\":\"x\"},\"t\":{\"v\":\"y\"}}", "t.u"), NULL));
    /* A key that is a prefix or extension of the wanted one does not match. */
    CHECK(get("{\"ab\":\"1\",\"a b\":\"2\"}", "a") == NULL);
    CHECK(eq(get("{\"ab\":\"1\",\"a\":\"2\"}", "a"), "2"));
    /* Whitespace everywhere. */
    CHECK(eq(get(" \n{ \"a\" :\t{ \"b\" : \"c\" } } \r\n", "a.b"), "c"));
}

static void malformed(void) {
    const char *bad[] = {
        "", "[]", "\"s\"", "{", "{\"a\":}", "{\"a\":\"x\"", "{\"a\":\"x\",}", "{\"a\" \"x\"}",
        "{\"a\":\"x\"} x", "{\"a\":\"x\"}{}", "{\"a\":tru}", "{\"a\":01}", "{\"a\":1.}", "{\"a\":-}",
        "{\"a\":1e}", "{\"a\":[1,]}", "{\"a\":[1 2]}", "{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}",
        "{\"a\":\"tab\there\"}", "{\"a\":[}", "{\"a\":{]}", "{a:\"x\"}", "{\"a\":\"x\"]",
        "{\"a\":\"\\", "{\"a\":\"\\u",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (get(bad[i], "a") != NULL) {
            fprintf(stderr, "accepted malformed input #%zu: %s\n", i, bad[i]);
            failures++;
        }
    }
    /* A malformed tail poisons the whole document, not only what follows the field. */
    CHECK(get("{\"a\":\"x\",\"b\":[1,}", "a") == NULL);
    /* Good numbers and literals. */
    CHECK(eq(get("{\"n\":[-0,1.5e+3,2E-2,0.25,true,false,null,{}],\"a\":\"ok\"}", "a"), "ok"));
    /* A text not NUL-terminated is read only up to len. */
    const char buf[] = "{\"a\":\"x\"}garbage";
    CHECK(eq(warden_json_str(buf, 9, "a"), "x"));
    CHECK(warden_json_str(buf, 8, "a") == NULL);
}

static void deep(void) {
    /* Deep nesting costs heap, not C stack. */
    size_t depth = 100000;
    char *s = malloc(depth * 2 + 64);
    size_t o = 0;
    o += (size_t)sprintf(s, "{\"d\":");
    for (size_t i = 0; i < depth; i++)
        s[o++] = '[';
    for (size_t i = 0; i < depth; i++)
        s[o++] = ']';
    o += (size_t)sprintf(s + o, ",\"a\":\"ok\"}");
    CHECK(eq(warden_json_str(s, o, "a"), "ok"));
    s[o - 12] = '}'; /* one bracket of the wrong kind */
    CHECK(warden_json_str(s, o, "a") == NULL);
    free(s);
}

static void quoting_and_utf8(void) {
    CHECK(eq(warden_json_quote("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\""));
    char *d = warden__utf8_dup("ok\xFF\xC3", 4);
    CHECK(eq(d, "ok\xEF\xBF\xBD\xEF\xBF\xBD"));
    free(d);
    d = warden__utf8_dup("\xED\xA0\x80", 3); /* an encoded surrogate is not UTF-8 */
    CHECK(eq(d, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"));
    free(d);
    d = warden__utf8_dup("\xF0\x9F\x98\x80", 4);
    CHECK(eq(d, "\xF0\x9F\x98\x80"));
    free(d);
    CHECK(eq(warden_fmt("%s=%d", "n", 42), "n=42"));
    CHECK(eq(warden_cat("a", "", "b\xC3\xA9", "c", (char *)NULL), "ab\xC3\xA9" "c"));
    CHECK(eq(warden_cat("", (char *)NULL), ""));
}

static void results(void) {
    warden_result r;
    warden__result_init(&r);
    CHECK(r.decision == WARDEN_NONE && r.continue_ && !r.reason);
    char buf[16];
    strcpy(buf, "why");
    warden_deny(&r, buf);
    buf[0] = 'X'; /* copied, not borrowed */
    CHECK(r.decision == WARDEN_DENY && eq(r.reason, "why"));
    warden_decidef(&r, WARDEN_ASK, "host %s", "x.com");
    CHECK(r.decision == WARDEN_ASK && eq(r.reason, "host x.com"));
    warden_stop(&r, "stop");
    CHECK(!r.continue_ && eq(r.stop_reason, "stop"));
    warden_system_message(&r, "bad \xFF");
    CHECK(eq(r.system_message, "bad \xEF\xBF\xBD"));
    warden_update_input(&r, "{\"command\":\"ls -la\"}");
    warden_add_context(&r, "ctx");
    warden_none(&r);
    CHECK(r.decision == WARDEN_NONE && r.reason == NULL);
    warden__result_free(&r);
    CHECK(r.decision == WARDEN_NONE && r.continue_ && !r.system_message);
}

int main(void) {
    strings();
    malformed();
    deep();
    quoting_and_utf8();
    results();
    warden__call_end();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    puts("warden_test: ok");
    return 0;
}
