/* {{name}}: a tool that counts the lines, words and bytes of a text, like `wc`. */
#include "warden.h"
#include <string.h>

void warden_tool_describe(warden_tool_info *info) {
    /* Offered as mcp__plugin_{{name}}_warden__count: this name, under the plugin's prefix. */
    info->name = "count";
    info->description = "Counts the lines, words and bytes of a text, like `wc`.";
    info->input_schema =
        "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\","
        "\"description\":\"The text to count\"}},\"required\":[\"text\"],\"additionalProperties\":false}";
}

/* Decimal text of n, in a buffer owned by the caller. */
static const char *num(unsigned long n, char buf[24]) {
    char *p = buf + 23;
    *p = '\0';
    do { *--p = (char)('0' + n % 10); n /= 10; } while (n);
    return p;
}

void warden_tool_invoke(const char *input, size_t len, warden_tool_result *result) {
    const char *text = warden_json_str(input, len, "text");
    if (!text) {
        warden_tool_invalid_input(result, "`text` must be a string");
        return;
    }
    unsigned long lines = 0, words = 0, bytes = strlen(text);
    int in_word = 0;
    for (const char *p = text; *p; p++) {
        int space = *p == ' ' || *p == '\n' || *p == '\t' || *p == '\r';
        if (*p == '\n') lines++;
        if (!space && !in_word) words++;
        in_word = !space;
    }
    if (bytes > 0 && text[bytes - 1] != '\n') lines++;
    char l[24], w[24], b[24];
    const char *ls = num(lines, l), *ws = num(words, w), *bs = num(bytes, b);
    warden_tool_ok(result, warden_cat(ls, " lines, ", ws, " words, ", bs, " bytes", NULL));
    warden_tool_structured(result, warden_cat("{\"lines\":", ls, ",\"words\":", ws, ",\"bytes\":", bs, "}", NULL));
}
