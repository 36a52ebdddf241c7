/* {{name}}: a PreToolUse hook on Bash. It denies `rm -rf /` and asks before `sudo`; every
 * other command goes on to the permission rules as usual. */
#include "warden.h"
#include <string.h>

/* Whether the whitespace-separated word `w` (of length n) occurs in `s`. */
static int has_word(const char *s, const char *w) {
    size_t n = strlen(w);
    for (const char *p = s; (p = strstr(p, w)) != NULL; p += n) {
        int starts = p == s || p[-1] == ' ' || p[-1] == '\t';
        int ends = p[n] == '\0' || p[n] == ' ' || p[n] == '\t';
        if (starts && ends) return 1;
    }
    return 0;
}

void warden_hook(const warden_event *event, warden_result *result) {
    const char *tool = warden_tool_name(event), *cmd = warden_command(event);
    if (!tool || strcmp(tool, "Bash") != 0 || !cmd) return; /* no decision */
    while (*cmd == ' ' || *cmd == '\t') cmd++;
    if (strncmp(cmd, "sudo", 4) == 0 && (cmd[4] == ' ' || cmd[4] == '\0')) {
        warden_ask(result, "runs as root");
        return;
    }
    if (strncmp(cmd, "rm ", 3) == 0 && has_word(cmd, "/") && (has_word(cmd, "-rf") || has_word(cmd, "-r") || has_word(cmd, "-fr")))
        warden_deny(result, "refusing to delete the root directory");
}
