"""The cross-language reference hook (the decision table), in Python."""

from warden_sdk import HookResult, hook

# Calls of `__count__` this instance has seen: a fresh sandbox per call keeps it at 1.
count_calls = 0


@hook
def handle(event):
    if event.name != "PreToolUse":
        return HookResult.none()
    command = event.command
    if event.tool_name != "Bash" or command is None:
        return HookResult.none()

    if command == "__loop__":
        n = 0
        while True:  # no allocation: a small int stays cached; never optimised away
            n = (n + 1) & 0xFF
    if command == "__bomb__":
        blocks = []
        while True:
            blocks.append(bytearray(b"x" * (1 << 20)))
    if command == "__trap__":
        raise RuntimeError("__trap__: the reference hook crashes on purpose")
    if command == "__count__":
        global count_calls
        count_calls += 1
        return HookResult.allow(str(count_calls))

    if "drop table" in command.lower():
        return HookResult.deny("destructive SQL: DROP TABLE")
    if command.startswith("sudo "):
        return HookResult.ask("runs as root")
    if command == "ls":
        return HookResult.allow("read-only listing")
    if command == "rewrite":
        return HookResult.allow("rewritten", updated_input={"command": "ls -la"})
    if command == "stop":
        return HookResult.none(continue_=False, stop_reason="stopped by policy")
    if command.startswith("say "):
        return HookResult.none(system_message=command[len("say "):])
    if command.startswith("echo "):
        return HookResult.none(additional_context="echo is harmless")
    return HookResult.none()
