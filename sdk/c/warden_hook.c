/*
 * Glue between the generated `hook` world bindings (gen/hook) and warden_hook(): turns the
 * WIT event into a warden_event and the warden_result into the WIT hook-result.
 */
#include "hook.h"
#include "warden.h"

#include <stdlib.h>
#include <string.h>

/* The canonical ABI passes strings with a length and no NUL: grow the host's buffer (from
 * cabi_realloc, so malloc'd unless empty) by one byte for it. */
static char *terminate(hook_string_t *s) {
    char *p = s->len > 0 ? realloc(s->ptr, s->len + 1) : malloc(1);
    if (!p)
        abort();
    p[s->len] = '\0';
    s->ptr = NULL;
    s->len = 0;
    return p;
}

/* Moves a setter's string (malloc'd, or NULL) into a WIT option<string>; the generated
 * post-return function frees it after the host has copied it. */
static void give(hook_option_string_t *dst, char **src) {
    char *s = *src;
    *src = NULL;
    dst->is_some = s != NULL;
    dst->val.ptr = NULL;
    dst->val.len = 0;
    if (!s)
        return;
    size_t n = strlen(s);
    if (n == 0) {
        free(s); /* post-return frees only non-empty strings */
        return;
    }
    dst->val.ptr = (uint8_t *)s;
    dst->val.len = n;
}

void exports_hook_handle(hook_event_t *event, hook_hook_result_t *ret) {
    size_t input_len = event->input.len;
    char *name = terminate(&event->name);
    char *input = terminate(&event->input);

    warden_event ev = {name, input, input_len};
    warden_result r;
    warden__result_init(&r);
    warden_hook(&ev, &r);
    warden__call_end();
    free(name);
    free(input);

    memset(ret, 0, sizeof *ret);
    ret->decision = (warden_plugin_types_decision_t)r.decision;
    give(&ret->reason, &r.reason);
    give(&ret->additional_context, &r.additional_context);
    give(&ret->updated_input, &r.updated_input);
    give(&ret->system_message, &r.system_message);
    ret->continue_ = r.continue_;
    give(&ret->stop_reason, &r.stop_reason);
    ret->suppress_output = r.suppress_output;
}
