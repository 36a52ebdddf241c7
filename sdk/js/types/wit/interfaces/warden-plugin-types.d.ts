declare module 'warden:plugin/types@0.1.0' {
  /**
   * A hook event, exactly as Claude Code hands it to a command hook.
   */
  export interface Event {
    /**
     * The event name, e.g. `PreToolUse` (the input's `hook_event_name`).
     */
    name: string,
    /**
     * The complete input JSON a command hook would read on stdin.
     */
    input: string,
  }
  /**
   * What a hook decides.
   * 
   * `allow`, `deny`, `ask` and `defer` are permission decisions (PreToolUse,
   * PermissionRequest); `block` stops the action for events that can be blocked
   * (UserPromptSubmit, Stop, PostToolUse, ...), exactly like exit code 2 of a command hook.
   * # Variants
   * 
   * ## `"none"`
   * 
   * No opinion: the normal flow continues.
   * ## `"allow"`
   * 
   * Allow the tool call, skipping the permission prompt (rules that deny or ask still apply).
   * ## `"deny"`
   * 
   * Deny the tool call; the reason is shown to the model.
   * ## `"ask"`
   * 
   * Ask the user.
   * ## `"defer"`
   * 
   * Defer the decision to the normal permission flow.
   * ## `"block"`
   * 
   * Block the action; the reason is fed back to the model.
   */
  export type Decision = 'none' | 'allow' | 'deny' | 'ask' | 'defer' | 'block';
  /**
   * A hook's typed answer. The host converts it to Claude Code's hook JSON output.
   */
  export interface HookResult {
    /**
     * The decision.
     */
    decision: Decision,
    /**
     * Why: shown to the model for deny/block, to the user for ask/allow.
     */
    reason?: string,
    /**
     * Text added to the model's context.
     */
    additionalContext?: string,
    /**
     * A replacement tool input, as a JSON object (PreToolUse, PermissionRequest).
     */
    updatedInput?: string,
    /**
     * A message shown to the user.
     */
    systemMessage?: string,
    /**
     * `false` stops the whole agent after this hook (Claude Code's `continue: false`).
     */
    'continue': boolean,
    /**
     * Shown to the user when `continue` is false.
     */
    stopReason?: string,
    /**
     * Hide this hook's output from the transcript.
     */
    suppressOutput: boolean,
  }
  /**
   * What a tool says about itself.
   */
  export interface ToolInfo {
    /**
     * Tool name, e.g. `Read`.
     */
    name: string,
    /**
     * One-paragraph description for the model.
     */
    description: string,
    /**
     * JSON Schema of the input object, as JSON text.
     */
    inputSchema: string,
  }
  /**
   * A successful tool result.
   */
  export interface ToolOutput {
    /**
     * Text for the model.
     */
    content: string,
    /**
     * Optional structured result, as JSON text.
     */
    structured?: string,
  }
  /**
   * Why a tool failed.
   */
  export type ToolError = ToolErrorInvalidInput | ToolErrorDenied | ToolErrorFailed;
  /**
   * The input did not match the schema or made no sense.
   */
  export interface ToolErrorInvalidInput {
    tag: 'invalid-input',
    val: string,
  }
  /**
   * A capability check refused an access; the text names the path, program or host.
   */
  export interface ToolErrorDenied {
    tag: 'denied',
    val: string,
  }
  /**
   * Anything else.
   */
  export interface ToolErrorFailed {
    tag: 'failed',
    val: string,
  }
}
