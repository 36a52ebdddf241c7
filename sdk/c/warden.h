/*
 * Write Warden hooks (and tools) in C.
 *
 * A hook defines one function, warden_hook(), and links warden.c, warden_hook.c and the
 * generated bindings of the `hook` world (see README.md):
 *
 *     #include "warden.h"
 *     #include <string.h>
 *
 *     void warden_hook(const warden_event *event, warden_result *result) {
 *         const char *cmd = warden_command(event);
 *         if (cmd && strstr(cmd, "push --force"))
 *             warden_deny(result, "force-push is not allowed here; push without --force");
 *     }
 *
 * The result starts as "no decision" (none, continue = true). Every string handed to a
 * warden_* setter is copied, so stack buffers are fine; every string the helpers return is
 * owned by the current call and freed after warden_hook() returns.
 *
 * Strings crossing into the host must be UTF-8: the setters replace invalid bytes with
 * U+FFFD rather than let the host trap on them.
 */
#ifndef WARDEN_H
#define WARDEN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Event in ------------------------------------------------------------------------- */

/* One hook event, exactly as Claude Code hands it to a command hook. */
typedef struct warden_event {
    /* The event name: "PreToolUse", "Stop", ... (NUL-terminated). */
    const char *name;
    /* The complete input JSON (NUL-terminated; input_len excludes the NUL). */
    const char *input;
    size_t input_len;
} warden_event;

/* A string field at a dot-separated path of the event input ("cwd",
 * "tool_input.command"), decoded (escapes and \uXXXX surrogate pairs included), or NULL
 * when the field is missing, is not a string, contains U+0000, or the input is not a JSON
 * object. Keys are matched after decoding; with duplicate keys the last one wins, as with
 * JavaScript's JSON.parse. */
const char *warden_str(const warden_event *event, const char *path);

/* The raw JSON text of the value at `path` (any type), not NUL-terminated; NULL when
 * missing. `*len` receives its length. Use it for numbers, booleans and nested values. */
const char *warden_raw(const warden_event *event, const char *path, size_t *len);

/* Shorthands for the fields most hooks need. */
const char *warden_tool_name(const warden_event *event);  /* tool_name */
const char *warden_command(const warden_event *event);    /* tool_input.command (Bash) */
const char *warden_url(const warden_event *event);        /* tool_input.url (WebFetch) */
const char *warden_file_path(const warden_event *event);  /* tool_input.file_path, or .notebook_path */
const char *warden_cwd(const warden_event *event);        /* cwd */

/* ---- Decision out ---------------------------------------------------------------------- */

/* The WIT `decision` enum, in the same order. */
typedef enum warden_decision {
    WARDEN_NONE = 0,
    WARDEN_ALLOW,
    WARDEN_DENY,
    WARDEN_ASK,
    WARDEN_DEFER,
    WARDEN_BLOCK,
} warden_decision;

/* A hook's answer; change it only through the setters below. NULL means "not set". */
typedef struct warden_result {
    warden_decision decision;
    char *reason;
    char *additional_context;
    char *updated_input; /* a JSON object, as text */
    char *system_message;
    bool continue_;
    char *stop_reason;
    bool suppress_output;
} warden_result;

/* The decision, with a reason (NULL for none). */
void warden_none(warden_result *r);
void warden_allow(warden_result *r, const char *reason);
void warden_deny(warden_result *r, const char *reason);
void warden_ask(warden_result *r, const char *reason);
void warden_defer(warden_result *r);
void warden_block(warden_result *r, const char *reason);
/* Any decision with a printf-style reason (see warden_fmt() on its cost). */
void warden_decidef(warden_result *r, warden_decision d, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Text added to the model's context. */
void warden_add_context(warden_result *r, const char *text);
/* A replacement tool input: a JSON object as text (PreToolUse, PermissionRequest). */
void warden_update_input(warden_result *r, const char *json_object);
/* A message shown to the user. */
void warden_system_message(warden_result *r, const char *text);
/* Stops the whole agent after this hook (continue = false), with a reason for the user. */
void warden_stop(warden_result *r, const char *reason);
/* Hides this hook's output from the transcript. */
void warden_suppress_output(warden_result *r);

/* ---- The hook ---------------------------------------------------------------------------- */

/* Defined by the hook: decides on one event. */
void warden_hook(const warden_event *event, warden_result *result);

/* ---- Tools (world `tool`: link warden_tool.c instead of warden_hook.c) --------------------- */

/* What a tool says about itself; static strings are fine (they are copied). */
typedef struct warden_tool_info {
    const char *name;         /* e.g. "WordCount" */
    const char *description;  /* one paragraph for the model */
    const char *input_schema; /* JSON Schema of the input object, as JSON text */
} warden_tool_info;

/* Why a tool failed (the WIT `tool-error` cases). */
typedef enum warden_tool_status {
    WARDEN_TOOL_OK = 0,
    WARDEN_TOOL_INVALID_INPUT,
    WARDEN_TOOL_DENIED,
    WARDEN_TOOL_FAILED,
} warden_tool_status;

/* A tool's answer; change it only through the setters below. */
typedef struct warden_tool_result {
    warden_tool_status status;
    char *text;       /* the content on success, the message on failure */
    char *structured; /* optional structured result, JSON text (success only) */
} warden_tool_result;

/* Defined by a tool. */
void warden_tool_describe(warden_tool_info *info);
/* Defined by a tool: runs on the input object (JSON text, NUL-terminated). The result starts
 * as success with empty content. */
void warden_tool_invoke(const char *input, size_t input_len, warden_tool_result *result);

void warden_tool_ok(warden_tool_result *r, const char *content);
void warden_tool_structured(warden_tool_result *r, const char *json);
void warden_tool_invalid_input(warden_tool_result *r, const char *message);
void warden_tool_denied(warden_tool_result *r, const char *message);
void warden_tool_failed(warden_tool_result *r, const char *message);

/* ---- JSON helpers (any text, e.g. a tool's input) ----------------------------------------- */

/* Like warden_str()/warden_raw() on any JSON text whose top level is an object. */
const char *warden_json_str(const char *json, size_t len, const char *path);
const char *warden_json_raw(const char *json, size_t len, const char *path, size_t *out_len);
/* `s` as a quoted JSON string literal, for building updated input by hand. */
const char *warden_json_quote(const char *s);

/* The strings up to a NULL, joined, owned by the current call (NULL if out of memory):
 * warden_cat("WebFetch to ", host, " is not allowed", NULL). */
const char *warden_cat(const char *first, ...) __attribute__((sentinel));

/* printf into a string owned by the current call (NULL if out of memory). printf brings in
 * libc's stdio, and with it WASI imports (stdio streams, filesystem, clocks through the
 * preview1 adapter) that every call then pays for; warden_cat() does not. */
const char *warden_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- Internal: used by the generated-bindings glue --------------------------------------- */

/* Resets `r` to "no decision". */
void warden__result_init(warden_result *r);
/* Frees what warden__result_init() and the setters allocated (strings still set). */
void warden__result_free(warden_result *r);
/* Frees every string the helpers handed out during this call. */
void warden__call_end(void);
void warden__tool_result_init(warden_tool_result *r);
void warden__tool_result_free(warden_tool_result *r);
/* A malloc'd NUL-terminated copy of `len` bytes, invalid UTF-8 replaced by U+FFFD. */
char *warden__utf8_dup(const char *s, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* WARDEN_H */
