"""{{name}}: a PreToolUse hook on Bash. It denies `rm -rf /` and asks before `sudo`; every
other command goes on to the permission rules as usual."""

from warden_sdk import HookResult, hook


@hook
def handle(event):
    command = event.command
    if event.tool_name != "Bash" or command is None:
        return HookResult.none()
    words = command.split()
    if words[:1] == ["sudo"]:
        return HookResult.ask("runs as root")
    if words[:1] == ["rm"] and "/" in words and any(w.startswith("-") and "r" in w for w in words):
        return HookResult.deny("refusing to delete the root directory")
    return HookResult.none()
