// {{name}}: a PreToolUse hook on Bash. It denies `rm -rf /` and asks before `sudo`; every
// other command goes on to the permission rules as usual.
import { hook, HookResult } from "warden";

export const handle = hook((event) => {
  const command = event.command;
  if (event.toolName !== "Bash" || command === undefined) return HookResult.none();
  const words = command.trim().split(/\s+/);
  if (words[0] === "sudo") return HookResult.ask("runs as root");
  if (words[0] === "rm" && words.includes("/") && words.some((w) => w.startsWith("-") && w.includes("r"))) {
    return HookResult.deny("refusing to delete the root directory");
  }
  return HookResult.none();
});
