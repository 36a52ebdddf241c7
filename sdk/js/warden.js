// Warden's JavaScript SDK: write hooks and tools for Warden as WebAssembly components built
// with componentize-qjs (QuickJS).
//
// A hook:
//
//     import { hook, HookResult } from "warden";
//     export const handle = hook((event) =>
//       event.command?.includes("rm -rf /") ? HookResult.deny("no") : HookResult.none());
//
// A tool:
//
//     import { tool, ToolError } from "warden";
//     export const { describe, invoke } = tool({
//       name: "Upper", description: "Upper-cases text.",
//       inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
//       invoke(input) {
//         if (typeof input.text !== "string") throw ToolError.invalidInput("text must be a string");
//         return input.text.toUpperCase();
//       },
//     });
//
// Every call runs in a fresh sandbox, so module-level state never carries over between calls.
// This module imports only `warden:plugin/log`, which every plugin has; the capability
// interfaces (`warden:plugin/fs`, `exec`, `http`, `env`) are imported by the plugin's own code
// when it needs them, and `warden build` links only those.

import wardenLog from "warden:plugin/log@0.1.0";

// ---------------------------------------------------------------------------------------------
// Logging. QuickJS has no `console`; give it one that writes to the host's log.

const LEVELS = ["trace", "debug", "info", "warn", "error"];

function text(args) {
  return args
    .map((a) => {
      if (typeof a === "string") return a;
      if (a instanceof Error) return a.stack ? `${a.name}: ${a.message}\n${a.stack}` : `${a.name}: ${a.message}`;
      try {
        const s = JSON.stringify(a);
        return s === undefined ? String(a) : s;
      } catch {
        return String(a);
      }
    })
    .join(" ");
}

/** Writes to the host's log. `level` is one of trace, debug, info, warn, error. */
export function log(level, ...args) {
  if (!LEVELS.includes(level)) throw new TypeError(`log level must be one of ${LEVELS.join(", ")}, got ${level}`);
  wardenLog.log(level, text(args));
}

if (typeof globalThis.console === "undefined") {
  globalThis.console = {
    trace: (...a) => log("trace", ...a),
    debug: (...a) => log("debug", ...a),
    log: (...a) => log("info", ...a),
    info: (...a) => log("info", ...a),
    warn: (...a) => log("warn", ...a),
    error: (...a) => log("error", ...a),
  };
}

// ---------------------------------------------------------------------------------------------
// Events.

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function str(v) {
  return typeof v === "string" ? v : undefined;
}

/**
 * A hook event, as Claude Code hands it to a command hook: the event name, the parsed input
 * object, and shortcuts for the fields most hooks read.
 */
export class HookEvent {
  /**
   * @param {string} name the event name (`PreToolUse`, `Stop`, ...)
   * @param {string} raw the input JSON text; must be an object
   */
  constructor(name, raw) {
    const input = JSON.parse(raw);
    if (!isObject(input)) throw new TypeError("a hook event must be a JSON object");
    /** The event name. */
    this.name = name;
    /** The input exactly as the host sent it. */
    this.raw = raw;
    /** The whole input object. */
    this.input = input;
  }

  /** `session_id`. */
  get sessionId() { return str(this.input.session_id) ?? ""; }
  /** `transcript_path`. */
  get transcriptPath() { return str(this.input.transcript_path) ?? ""; }
  /** `cwd`: the session's working directory. */
  get cwd() { return str(this.input.cwd) ?? ""; }
  /** `permission_mode`, when the event carries one. */
  get permissionMode() { return str(this.input.permission_mode); }

  /** `tool_name` of tool events (`PreToolUse`, `PostToolUse`, ...), else undefined. */
  get toolName() { return str(this.input.tool_name); }
  /** `tool_input` of tool events (an object), else undefined. */
  get toolInput() {
    return this.toolName !== undefined && isObject(this.input.tool_input) ? this.input.tool_input : undefined;
  }
  /** `tool_use_id`, when present. */
  get toolUseId() { return str(this.input.tool_use_id); }

  /** A string field of the tool input, else undefined. */
  inputStr(field) { return str(this.toolInput?.[field]); }
  /** `tool_input.command` (Bash), when it is a string. */
  get command() { return this.inputStr("command"); }
  /** `tool_input.file_path` (Read, Write, Edit, MultiEdit) or `notebook_path` (NotebookEdit). */
  get filePath() { return this.inputStr("file_path") ?? this.inputStr("notebook_path"); }

  /**
   * The new text a file tool would write, one entry per piece: Write's `content`, Edit's
   * `new_string`, each of MultiEdit's `edits[i].new_string`, NotebookEdit's `new_source`.
   * Each entry is `{ field, text }`, `field` naming where it came from (`content`,
   * `new_string`, `edits[1].new_string`, ...). Empty for other tools.
   * @returns {{ field: string, text: string }[]}
   */
  get newTexts() {
    const ti = this.toolInput;
    if (ti === undefined) return [];
    const out = [];
    switch (this.toolName) {
      case "Write":
        if (typeof ti.content === "string") out.push({ field: "content", text: ti.content });
        break;
      case "Edit":
        if (typeof ti.new_string === "string") out.push({ field: "new_string", text: ti.new_string });
        break;
      case "MultiEdit":
        if (Array.isArray(ti.edits)) {
          ti.edits.forEach((e, i) => {
            if (isObject(e) && typeof e.new_string === "string") {
              out.push({ field: `edits[${i}].new_string`, text: e.new_string });
            }
          });
        }
        break;
      case "NotebookEdit":
        if (typeof ti.new_source === "string") out.push({ field: "new_source", text: ti.new_source });
        break;
    }
    return out;
  }

  /** The new text a file tool would write (see `newTexts`), pieces joined by newlines; else undefined. */
  get content() {
    const pieces = this.newTexts;
    return pieces.length === 0 ? undefined : pieces.map((p) => p.text).join("\n");
  }

  /** A string field of the input (`prompt`, `source`, `reason`, ...), else undefined. */
  str(field) { return str(this.input[field]); }
}

// ---------------------------------------------------------------------------------------------
// Results.

/** The decisions of the WIT `decision` enum. */
export const Decision = Object.freeze({
  none: "none",
  allow: "allow",
  deny: "deny",
  ask: "ask",
  defer: "defer",
  block: "block",
});

const DECISIONS = Object.values(Decision);

const FIELDS = ["reason", "additionalContext", "updatedInput", "systemMessage", "continue", "stopReason", "suppressOutput"];

/**
 * A hook's answer. Make one with a factory (`HookResult.deny("why")`) and add to it with the
 * chaining methods or an options object: `HookResult.none({ additionalContext: "..." })`.
 */
export class HookResult {
  constructor(decision = "none", reason = undefined, options = {}) {
    if (!DECISIONS.includes(decision)) {
      throw new TypeError(`decision must be one of ${DECISIONS.join(", ")}, got ${decision}`);
    }
    /** The decision. */
    this.decision = decision;
    /** Why: shown to the model on deny/block, to the user on ask/allow. */
    this.reason = reason;
    /** Text added to the model's context. */
    this.additionalContext = undefined;
    /** A replacement tool input: an object (sent as JSON) or JSON text. */
    this.updatedInput = undefined;
    /** A message shown to the user. */
    this.systemMessage = undefined;
    /** `false` stops the agent after this hook. */
    this.continue = true;
    /** Shown to the user when `continue` is false. */
    this.stopReason = undefined;
    /** Hide this hook's output from the transcript. */
    this.suppressOutput = false;
    this.set(options);
  }

  /** Sets fields from an object with any of the result's field names. */
  set(options = {}) {
    for (const [k, v] of Object.entries(options ?? {})) {
      if (!FIELDS.includes(k)) throw new TypeError(`unknown hook result field ${k}; expected one of ${FIELDS.join(", ")}`);
      this[k] = v;
    }
    return this;
  }

  /** No opinion: the normal flow continues. */
  static none(options) { return new HookResult("none", undefined, options); }
  /** Allow the tool call without a prompt (deny and ask rules still apply). */
  static allow(reason, options) { return new HookResult("allow", reason, options); }
  /** Deny the tool call; the reason goes to the model. */
  static deny(reason, options) { return new HookResult("deny", reason, options); }
  /** Ask the user; the reason is shown in the prompt. */
  static ask(reason, options) { return new HookResult("ask", reason, options); }
  /** Leave the decision to the normal permission flow. */
  static defer(options) { return new HookResult("defer", undefined, options); }
  /** Block the action (exit code 2 of a command hook); the reason goes to the model. */
  static block(reason, options) { return new HookResult("block", reason, options); }

  /** Adds context for the model. */
  withContext(text) { this.additionalContext = text; return this; }
  /** Replaces the tool input (an object, sent as JSON). */
  withUpdatedInput(input) { this.updatedInput = input; return this; }
  /** Adds a message for the user. */
  withSystemMessage(message) { this.systemMessage = message; return this; }
  /** Stops the agent after this hook, telling the user why. */
  stop(reason) { this.continue = false; this.stopReason = reason; return this; }
  /** Hides this hook's output from the transcript. */
  suppress() { this.suppressOutput = true; return this; }

  /** A `HookResult` from one, from a plain object with its fields, or none from undefined/null. */
  static from(value) {
    if (value instanceof HookResult) return value;
    if (value === undefined || value === null) return HookResult.none();
    if (isObject(value) && typeof value.then !== "function") {
      const { decision = "none", ...rest } = value;
      return new HookResult(decision).set(rest);
    }
    throw new TypeError(
      typeof value?.then === "function"
        ? "a hook must return its result, not a Promise (hooks run synchronously)"
        : `a hook must return a HookResult, got ${typeof value}`,
    );
  }

  /** The WIT `hook-result` record. */
  toWit() {
    const opt = (name) => {
      const v = this[name];
      if (v === undefined || v === null) return null;
      if (typeof v !== "string") throw new TypeError(`hook result field ${name} must be a string, got ${typeof v}`);
      return v;
    };
    let updated = this.updatedInput;
    if (updated !== undefined && updated !== null && typeof updated !== "string") {
      if (!isObject(updated)) throw new TypeError("updatedInput must be an object (the new tool input)");
      updated = JSON.stringify(updated);
    }
    return {
      decision: this.decision,
      reason: opt("reason"),
      additionalContext: opt("additionalContext"),
      updatedInput: updated ?? null,
      systemMessage: opt("systemMessage"),
      continue: this.continue !== false,
      stopReason: opt("stopReason"),
      suppressOutput: this.suppressOutput === true,
    };
  }
}

/**
 * Wraps a hook function `(event: HookEvent) => HookResult` as the component's `handle`
 * export. A malformed event becomes a non-blocking `none` with a system message; an exception
 * thrown by the function is logged and rethrown, so the call traps and the host reports it
 * (and applies the hook's `onFailure`).
 */
export function hook(fn) {
  if (typeof fn !== "function") throw new TypeError("hook() takes the hook function");
  return function handle(witEvent) {
    let event;
    try {
      event = new HookEvent(witEvent.name, witEvent.input);
    } catch (e) {
      return HookResult.none({
        systemMessage: `hook could not parse the ${witEvent.name} event: ${e?.message ?? e}`,
      }).toWit();
    }
    try {
      return HookResult.from(fn(event)).toWit();
    } catch (e) {
      log("error", `hook failed on ${witEvent.name}:`, e);
      throw e;
    }
  };
}

// ---------------------------------------------------------------------------------------------
// Tools.

/** A successful tool result: text for the model and an optional structured value. */
export class ToolOutput {
  constructor(content, structured = undefined) {
    /** Text for the model. */
    this.content = content;
    /** A structured result (any JSON value), or undefined. */
    this.structured = structured;
  }

  /** A plain-text result. */
  static text(content) { return new ToolOutput(content); }
  /** A result with text and a structured value. */
  static json(content, structured) { return new ToolOutput(content, structured); }
}

const TOOL_ERROR_KINDS = ["invalid-input", "denied", "failed"];

/** Why a tool failed; thrown from `invoke`. Maps to the WIT `tool-error` variant. */
export class ToolError extends Error {
  /**
   * @param {"invalid-input"|"denied"|"failed"} kind
   * @param {string} message
   */
  constructor(kind, message) {
    super(message);
    if (!TOOL_ERROR_KINDS.includes(kind)) throw new TypeError(`tool error kind must be one of ${TOOL_ERROR_KINDS.join(", ")}`);
    this.name = "ToolError";
    this.kind = kind;
  }

  /** The input did not match the schema or made no sense. */
  static invalidInput(message) { return new InvalidInput(message); }
  /** A capability check refused an access. */
  static denied(message) { return new Denied(message); }
  /** Anything else. */
  static failed(message) { return new Failed(message); }

  toWit() { return { tag: this.kind, val: String(this.message) }; }
}

/** The input did not match the schema or made no sense. */
export class InvalidInput extends ToolError {
  constructor(message) { super("invalid-input", message); this.name = "InvalidInput"; }
}

/** A capability check refused an access. */
export class Denied extends ToolError {
  constructor(message) { super("denied", message); this.name = "Denied"; }
}

/** Anything else. */
export class Failed extends ToolError {
  constructor(message) { super("failed", message); this.name = "Failed"; }
}

function toolOutputToWit(value) {
  if (typeof value === "string") return { content: value, structured: null };
  if (value instanceof ToolOutput || isObject(value)) {
    if (typeof value.then === "function") throw new TypeError("a tool must return its result, not a Promise (tools run synchronously)");
    if (typeof value.content !== "string") throw new TypeError("a tool result needs a string `content`");
    const s = value.structured;
    return { content: value.content, structured: s === undefined || s === null ? null : JSON.stringify(s) };
  }
  throw new TypeError(`a tool must return a string or a ToolOutput, got ${typeof value}`);
}

/**
 * Builds the `describe` and `invoke` exports of a tool from
 * `{ name, description, inputSchema, invoke(input) }`. `invoke` gets the parsed input object
 * and returns a string or a `ToolOutput`; it throws a `ToolError` (`InvalidInput`, `Denied`,
 * `Failed`) to fail. Input that is not a JSON object becomes `invalid-input`; any other
 * exception becomes `failed` with its message.
 *
 *     export const { describe, invoke } = tool({ ... });
 */
export function tool(spec) {
  if (!isObject(spec) || typeof spec.invoke !== "function") {
    throw new TypeError("tool() takes { name, description, inputSchema, invoke(input) }");
  }
  const { name, description = "", inputSchema = { type: "object" } } = spec;
  if (typeof name !== "string" || name === "") throw new TypeError("a tool needs a name");
  const schema = typeof inputSchema === "string" ? inputSchema : JSON.stringify(inputSchema);
  return {
    describe() {
      return { name, description, inputSchema: schema };
    },
    invoke(raw) {
      let input;
      try {
        input = JSON.parse(raw);
      } catch (e) {
        throw new InvalidInput(`input is not JSON: ${e?.message ?? e}`).toWit();
      }
      if (!isObject(input)) throw new InvalidInput("input must be a JSON object").toWit();
      try {
        return toolOutputToWit(spec.invoke(input));
      } catch (e) {
        if (e instanceof ToolError) throw e.toWit();
        log("error", `tool ${name} failed:`, e);
        throw { tag: "failed", val: String(e?.message ?? e) };
      }
    },
  };
}
