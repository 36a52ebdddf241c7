// The cross-language reference hook ("decision table"), written with Warden's JavaScript SDK.
import { hook, HookResult } from "warden";

export const handle = hook((event) => {
  if (event.name !== "PreToolUse") return HookResult.none();
  const command = event.command;
  if (event.toolName !== "Bash" || command === undefined) return HookResult.none();

  switch (command) {
    case "__loop__":
      spin();
      break;
    case "__bomb__":
      bomb();
      break;
    case "__trap__":
      throw new Error("__trap__: the reference hook crashes on purpose");
    case "__count__":
      countCalls += 1;
      return HookResult.allow(String(countCalls));
  }

  if (command.toLowerCase().includes("drop table")) return HookResult.deny("destructive SQL: DROP TABLE");
  if (command.startsWith("sudo ")) return HookResult.ask("runs as root");
  if (command === "ls") return HookResult.allow("read-only listing");
  if (command === "rewrite") return HookResult.allow("rewritten").withUpdatedInput({ command: "ls -la" });
  if (command === "stop") return HookResult.none().stop("stopped by policy");
  if (command.startsWith("say ")) return HookResult.none().withSystemMessage(command.slice("say ".length));
  if (command.startsWith("echo ")) return HookResult.none().withContext("echo is harmless");
  return HookResult.none();
});

/** Calls of `__count__` this instance has seen: a fresh sandbox per call keeps it at 1. */
let countCalls = 0;

/** Busy-loops until the host's deadline interrupts it (QuickJS interprets: nothing is optimised away). */
let spins = 0;
function spin() {
  for (;;) spins = (spins + 1) | 0;
}

/** Allocates and fills 1 MiB blocks until the host's memory limit stops it. */
function bomb() {
  const blocks = [];
  for (;;) blocks.push(new Uint8Array(1 << 20).fill(blocks.length & 0xff | 1));
}
