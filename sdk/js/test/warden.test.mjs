// Unit tests of the SDK under node: node --test sdk/js/test/warden.test.mjs
import "./register.mjs";
import { test } from "node:test";
import assert from "node:assert/strict";

const { hook, HookResult, HookEvent, tool, ToolError, ToolOutput, InvalidInput, log } = await import("warden");

const event = (toolName, toolInput, name = "PreToolUse") => ({
  name,
  input: JSON.stringify({ session_id: "s", cwd: "/p", hook_event_name: name, tool_name: toolName, tool_input: toolInput }),
});

test("the event's shortcuts", () => {
  const e = new HookEvent("PreToolUse", event("Bash", { command: "ls" }).input);
  assert.equal(e.toolName, "Bash");
  assert.equal(e.command, "ls");
  assert.equal(e.filePath, undefined);
  assert.equal(e.cwd, "/p");
  assert.equal(e.content, undefined);
  const m = new HookEvent("PreToolUse", event("MultiEdit", { file_path: "/a", edits: [{ new_string: "x" }, { new_string: "y" }] }).input);
  assert.equal(m.filePath, "/a");
  assert.deepEqual(m.newTexts, [{ field: "edits[0].new_string", text: "x" }, { field: "edits[1].new_string", text: "y" }]);
  assert.equal(m.content, "x\ny");
  const w = new HookEvent("PreToolUse", event("Write", { file_path: "/a", content: "c" }).input);
  assert.equal(w.content, "c");
  const n = new HookEvent("Stop", JSON.stringify({ session_id: "s", stop_hook_active: false }));
  assert.equal(n.toolName, undefined);
  assert.equal(n.toolInput, undefined);
  assert.equal(n.command, undefined);
});

test("results become the WIT record", () => {
  const none = { decision: "none", reason: null, additionalContext: null, updatedInput: null, systemMessage: null, continue: true, stopReason: null, suppressOutput: false };
  assert.deepEqual(HookResult.none().toWit(), none);
  assert.deepEqual(HookResult.deny("no").toWit(), { ...none, decision: "deny", reason: "no" });
  assert.deepEqual(HookResult.allow("ok").withUpdatedInput({ command: "ls -la" }).toWit(), { ...none, decision: "allow", reason: "ok", updatedInput: '{"command":"ls -la"}' });
  assert.deepEqual(HookResult.none().stop("halt").toWit(), { ...none, continue: false, stopReason: "halt" });
  assert.deepEqual(HookResult.none({ systemMessage: "héllo ✓ 日本", additionalContext: "c" }).suppress().toWit(), { ...none, systemMessage: "héllo ✓ 日本", additionalContext: "c", suppressOutput: true });
  assert.deepEqual(HookResult.from({ decision: "block", reason: "r" }).toWit(), { ...none, decision: "block", reason: "r" });
  assert.deepEqual(HookResult.from(undefined).toWit(), none);
  assert.throws(() => new HookResult("maybe"), /decision must be one of/);
  assert.throws(() => HookResult.none({ reasons: "x" }), /unknown hook result field reasons/);
  assert.throws(() => HookResult.from(Promise.resolve(1)), /not a Promise/);
  assert.throws(() => HookResult.none().withUpdatedInput([1]).toWit(), /must be an object/);
});

test("hook() wraps a function as handle", () => {
  const handle = hook((e) => (e.command?.includes("rm -rf /") ? HookResult.deny("no") : HookResult.none()));
  assert.equal(handle(event("Bash", { command: "rm -rf / x" })).decision, "deny");
  assert.equal(handle(event("Bash", { command: "ls" })).decision, "none");
  const bad = handle({ name: "PreToolUse", input: "[1]" });
  assert.equal(bad.decision, "none");
  assert.match(bad.systemMessage, /could not parse the PreToolUse event/);
  const throwing = hook(() => { throw new Error("boom"); });
  assert.throws(() => throwing(event("Bash", { command: "ls" })), /boom/);
  assert.match(globalThis.__wardenLog.at(-1).message, /hook failed on PreToolUse: Error: boom/);
});

test("tool() builds describe and invoke", () => {
  const t = tool({
    name: "Upper",
    description: "d",
    inputSchema: { type: "object" },
    invoke(input) {
      if (input.text === "deny") throw ToolError.denied("nope");
      if (input.text === "boom") throw new Error("kaput");
      if (typeof input.text !== "string") throw new InvalidInput("text must be a string");
      return input.text === "json" ? ToolOutput.json("J", { n: 1 }) : input.text.toUpperCase();
    },
  });
  assert.deepEqual(t.describe(), { name: "Upper", description: "d", inputSchema: '{"type":"object"}' });
  assert.deepEqual(t.invoke('{"text":"ab"}'), { content: "AB", structured: null });
  assert.deepEqual(t.invoke('{"text":"json"}'), { content: "J", structured: '{"n":1}' });
  const thrown = (raw) => { try { t.invoke(raw); } catch (e) { return e; } assert.fail("no throw"); };
  assert.deepEqual(thrown('{"text":"deny"}'), { tag: "denied", val: "nope" });
  assert.deepEqual(thrown('{"text":"boom"}'), { tag: "failed", val: "kaput" });
  assert.deepEqual(thrown('{"text":3}'), { tag: "invalid-input", val: "text must be a string" });
  assert.equal(thrown("nope").tag, "invalid-input");
  assert.deepEqual(thrown("[1]"), { tag: "invalid-input", val: "input must be a JSON object" });
});

test("log() writes to the host's log", () => {
  // (node has a console of its own, so the SDK's console, which calls log(), is not installed here.)
  log("warn", "careful", { a: 1 }, 2);
  assert.deepEqual(globalThis.__wardenLog.at(-1), { level: "warn", message: 'careful {"a":1} 2' });
  assert.throws(() => log("loud", "x"), /log level must be one of/);
});
