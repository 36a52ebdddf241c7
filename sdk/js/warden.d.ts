// Declarations of Warden's JavaScript SDK (the module "warden", implemented by warden.js).
// The WIT interfaces themselves (`warden:plugin/fs@0.1.0`, ...) are declared in types/wit/,
// generated from wit/v0.1 by gen-types.mjs. One difference from those generated files: in a
// componentize-qjs component an absent WIT `option` is `null`, not `undefined`.

/// <reference path="./types/wit/interfaces/warden-plugin-types.d.ts" />

declare module "warden" {
  import type { Event as WitEvent, HookResult as WitHookResult, ToolInfo, ToolOutput as WitToolOutput } from "warden:plugin/types@0.1.0";

  /** A JSON value. */
  export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

  /** Log levels of `warden:plugin/log`. */
  export type LogLevel = "trace" | "debug" | "info" | "warn" | "error";

  /** Writes to the host's log (QuickJS has no console of its own; the SDK's `console` writes here too). */
  export function log(level: LogLevel, ...args: unknown[]): void;

  /** One piece of new text a file tool would write. */
  export interface NewText {
    /** Where it came from: `content`, `new_string`, `edits[1].new_string`, `new_source`. */
    field: string;
    text: string;
  }

  /** A hook event, as Claude Code hands it to a command hook. */
  export class HookEvent {
    /** Parses an event's input JSON, which must be an object. */
    constructor(name: string, raw: string);
    /** The event name (`PreToolUse`, `Stop`, ...). */
    readonly name: string;
    /** The input exactly as the host sent it. */
    readonly raw: string;
    /** The whole input object. */
    readonly input: { [key: string]: Json };
    /** `session_id` ("" when absent). */
    readonly sessionId: string;
    /** `transcript_path` ("" when absent). */
    readonly transcriptPath: string;
    /** `cwd` ("" when absent). */
    readonly cwd: string;
    /** `permission_mode`, when the event carries one. */
    readonly permissionMode: string | undefined;
    /** `tool_name` of tool events. */
    readonly toolName: string | undefined;
    /** `tool_input` of tool events, when it is an object. */
    readonly toolInput: { [key: string]: Json } | undefined;
    /** `tool_use_id`, when present. */
    readonly toolUseId: string | undefined;
    /** `tool_input.command` (Bash), when it is a string. */
    readonly command: string | undefined;
    /** `tool_input.file_path`, or `notebook_path` (NotebookEdit). */
    readonly filePath: string | undefined;
    /** New text of Write (`content`), Edit (`new_string`), MultiEdit (each `edits[i].new_string`), NotebookEdit (`new_source`). */
    readonly newTexts: NewText[];
    /** `newTexts` joined by newlines; undefined for other tools. */
    readonly content: string | undefined;
    /** A string field of the tool input. */
    inputStr(field: string): string | undefined;
    /** A string field of the input (`prompt`, `source`, `reason`, ...). */
    str(field: string): string | undefined;
  }

  /** The decisions of the WIT `decision` enum. */
  export type DecisionName = "none" | "allow" | "deny" | "ask" | "defer" | "block";
  export const Decision: Readonly<{ [K in DecisionName]: K }>;

  /** Fields a result can be given through an options object or `set`. */
  export interface HookResultOptions {
    reason?: string;
    additionalContext?: string;
    /** A replacement tool input: an object (sent as JSON) or JSON text. */
    updatedInput?: { [key: string]: Json } | string;
    systemMessage?: string;
    continue?: boolean;
    stopReason?: string;
    suppressOutput?: boolean;
  }

  /** A hook's answer. */
  export class HookResult {
    constructor(decision?: DecisionName, reason?: string, options?: HookResultOptions);
    decision: DecisionName;
    reason: string | undefined;
    additionalContext: string | undefined;
    updatedInput: { [key: string]: Json } | string | undefined;
    systemMessage: string | undefined;
    continue: boolean;
    stopReason: string | undefined;
    suppressOutput: boolean;

    static none(options?: HookResultOptions): HookResult;
    static allow(reason?: string, options?: HookResultOptions): HookResult;
    static deny(reason: string, options?: HookResultOptions): HookResult;
    static ask(reason?: string, options?: HookResultOptions): HookResult;
    static defer(options?: HookResultOptions): HookResult;
    static block(reason: string, options?: HookResultOptions): HookResult;
    /** A result from a HookResult, a plain object with its fields, or none from undefined/null. */
    static from(value: HookResult | (HookResultOptions & { decision?: DecisionName }) | undefined | null): HookResult;

    set(options: HookResultOptions): this;
    withContext(text: string): this;
    withUpdatedInput(input: { [key: string]: Json }): this;
    withSystemMessage(message: string): this;
    /** Sets `continue` to false and the stop reason. */
    stop(reason: string): this;
    suppress(): this;
    /** The WIT `hook-result` record. */
    toWit(): WitHookResult;
  }

  /** What a hook function may return. */
  export type HookReturn = HookResult | (HookResultOptions & { decision?: DecisionName }) | undefined | null;

  /** Wraps a hook function as the component's `handle` export: `export const handle = hook((event) => ...)`. */
  export function hook(fn: (event: HookEvent) => HookReturn): (event: WitEvent) => WitHookResult;

  /** A successful tool result. */
  export class ToolOutput {
    constructor(content: string, structured?: Json);
    content: string;
    structured: Json | undefined;
    static text(content: string): ToolOutput;
    static json(content: string, structured: Json): ToolOutput;
  }

  export type ToolErrorKind = "invalid-input" | "denied" | "failed";

  /** Why a tool failed; throw it from `invoke`. Maps to the WIT `tool-error` variant. */
  export class ToolError extends Error {
    constructor(kind: ToolErrorKind, message: string);
    readonly kind: ToolErrorKind;
    static invalidInput(message: string): InvalidInput;
    static denied(message: string): Denied;
    static failed(message: string): Failed;
    toWit(): { tag: ToolErrorKind; val: string };
  }
  export class InvalidInput extends ToolError {
    constructor(message: string);
  }
  export class Denied extends ToolError {
    constructor(message: string);
  }
  export class Failed extends ToolError {
    constructor(message: string);
  }

  /** What `tool()` takes. */
  export interface ToolSpec<I = { [key: string]: Json }> {
    name: string;
    description?: string;
    /** JSON Schema of the input object (an object, or its JSON text). Default `{ "type": "object" }`. */
    inputSchema?: { [key: string]: Json } | string;
    /** Runs the tool on the parsed input object; returns text or a ToolOutput, throws a ToolError to fail. */
    invoke(input: I): string | ToolOutput | { content: string; structured?: Json };
  }

  /** The `describe` and `invoke` exports of a tool: `export const { describe, invoke } = tool({ ... })`. */
  export function tool<I = { [key: string]: Json }>(
    spec: ToolSpec<I>,
  ): { describe(): ToolInfo; invoke(input: string): WitToolOutput };
}
