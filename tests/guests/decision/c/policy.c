/*
 * The cross-language reference hook ("decision table"), in C.
 */
#include "warden.h"

#include <stdlib.h>
#include <string.h>

static char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c; }

/* Whether `needle` (lowercase) occurs in `s`, ignoring ASCII case. */
static int contains_nocase(const char *s, const char *needle) {
    size_t n = strlen(needle);
    for (; *s; s++) {
        size_t i = 0;
        while (i < n && s[i] && ascii_lower(s[i]) == needle[i])
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

static int starts_with(const char *s, const char *prefix) {
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Busy loop with no allocation, kept by the volatile counter. */
static void spin(void) {
    volatile unsigned long n = 0;
    for (;;)
        n++;
}

/* Calls of `__count__` this instance has seen: a fresh sandbox per call keeps it at 1. */
static unsigned long count_calls;

/* Allocates and touches 1 MiB blocks, chained so none is dead, until memory runs out. */
static void *volatile bomb_head;
static void bomb(void) {
    for (;;) {
        void **block = malloc(1 << 20);
        if (!block)
            abort(); /* the host refused to grow memory */
        memset(block, 0xA5, 1 << 20);
        block[0] = bomb_head;
        bomb_head = block;
    }
}

void warden_hook(const warden_event *event, warden_result *result) {
    if (strcmp(event->name, "PreToolUse") != 0)
        return;
    const char *tool = warden_tool_name(event);
    const char *cmd = warden_command(event);
    if (!tool || strcmp(tool, "Bash") != 0 || !cmd)
        return;

    if (strcmp(cmd, "__loop__") == 0)
        spin();
    else if (strcmp(cmd, "__bomb__") == 0)
        bomb();
    else if (strcmp(cmd, "__trap__") == 0)
        abort();
    else if (strcmp(cmd, "__count__") == 0) {
        char n[24];
        int i = (int)sizeof n - 1;
        unsigned long v = ++count_calls;
        n[i] = '\0';
        do {
            n[--i] = (char)('0' + v % 10);
            v /= 10;
        } while (v && i > 0);
        warden_allow(result, n + i);
    }
    else if (contains_nocase(cmd, "drop table"))
        warden_deny(result, "destructive SQL: DROP TABLE");
    else if (starts_with(cmd, "sudo "))
        warden_ask(result, "runs as root");
    else if (strcmp(cmd, "ls") == 0)
        warden_allow(result, "read-only listing");
    else if (strcmp(cmd, "rewrite") == 0) {
        warden_allow(result, "rewritten");
        warden_update_input(result, "{\"command\":\"ls -la\"}");
    } else if (strcmp(cmd, "stop") == 0)
        warden_stop(result, "stopped by policy");
    else if (starts_with(cmd, "say "))
        warden_system_message(result, cmd + strlen("say "));
    else if (starts_with(cmd, "echo "))
        warden_add_context(result, "echo is harmless");
}
