/*
 * Glue between the generated `tool` world bindings (gen/tool) and warden_tool_describe() /
 * warden_tool_invoke().
 */
#include "tool.h"
#include "warden.h"

#include <stdlib.h>
#include <string.h>

/* A WIT string the generated post-return function may free: malloc'd when non-empty. */
static tool_string_t owned(const char *s) {
    tool_string_t out = {NULL, 0};
    if (!s || !*s)
        return out;
    char *p = warden__utf8_dup(s, strlen(s));
    if (!p)
        abort();
    out.ptr = (uint8_t *)p;
    out.len = strlen(p);
    return out;
}

/* Moves a setter's string into a WIT string. */
static tool_string_t give(char **src) {
    char *s = *src;
    *src = NULL;
    tool_string_t out = {NULL, 0};
    if (s && *s) {
        out.ptr = (uint8_t *)s;
        out.len = strlen(s);
    } else {
        free(s);
    }
    return out;
}

void exports_tool_describe(tool_tool_info_t *ret) {
    warden_tool_info info = {"", "", "{\"type\":\"object\"}"};
    warden_tool_describe(&info);
    ret->name = owned(info.name);
    ret->description = owned(info.description);
    ret->input_schema = owned(info.input_schema);
    warden__call_end();
}

bool exports_tool_invoke(tool_string_t *input, tool_tool_output_t *ret, tool_tool_error_t *err) {
    size_t len = input->len;
    char *text = len > 0 ? realloc(input->ptr, len + 1) : malloc(1);
    if (!text)
        abort();
    text[len] = '\0';

    warden_tool_result r;
    warden__tool_result_init(&r);
    warden_tool_invoke(text, len, &r);
    warden__call_end();
    free(text);

    bool ok = r.status == WARDEN_TOOL_OK;
    if (ok) {
        ret->content = give(&r.text);
        ret->structured.is_some = r.structured != NULL;
        ret->structured.val = give(&r.structured);
    } else {
        err->tag = r.status == WARDEN_TOOL_INVALID_INPUT ? WARDEN_PLUGIN_TYPES_TOOL_ERROR_INVALID_INPUT
                   : r.status == WARDEN_TOOL_DENIED      ? WARDEN_PLUGIN_TYPES_TOOL_ERROR_DENIED
                                                         : WARDEN_PLUGIN_TYPES_TOOL_ERROR_FAILED;
        err->val.failed = give(&r.text);
    }
    warden__tool_result_free(&r);
    return ok;
}
