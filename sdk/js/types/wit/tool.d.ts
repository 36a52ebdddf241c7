/// <reference path="./interfaces/warden-plugin-env.d.ts" />
/// <reference path="./interfaces/warden-plugin-exec.d.ts" />
/// <reference path="./interfaces/warden-plugin-fs.d.ts" />
/// <reference path="./interfaces/warden-plugin-http.d.ts" />
/// <reference path="./interfaces/warden-plugin-log.d.ts" />
/// <reference path="./interfaces/warden-plugin-types.d.ts" />
declare module 'warden:plugin/tool@0.1.0' {
  export type ToolInfo = import('warden:plugin/types@0.1.0').ToolInfo;
  export type ToolOutput = import('warden:plugin/types@0.1.0').ToolOutput;
  export type ToolError = import('warden:plugin/types@0.1.0').ToolError;
  export type * as WardenPluginEnv010 from 'warden:plugin/env@0.1.0'; // import warden:plugin/env@0.1.0
  export type * as WardenPluginExec010 from 'warden:plugin/exec@0.1.0'; // import warden:plugin/exec@0.1.0
  export type * as WardenPluginFs010 from 'warden:plugin/fs@0.1.0'; // import warden:plugin/fs@0.1.0
  export type * as WardenPluginHttp010 from 'warden:plugin/http@0.1.0'; // import warden:plugin/http@0.1.0
  export type * as WardenPluginLog010 from 'warden:plugin/log@0.1.0'; // import warden:plugin/log@0.1.0
  export type * as WardenPluginTypes010 from 'warden:plugin/types@0.1.0'; // import warden:plugin/types@0.1.0
  /**
  * Describes the tool (name, description, input schema).
  */
  export function describe(): ToolInfo;
  /**
  * Runs the tool on a JSON input object.
  */
  export function invoke(input: string): ToolOutput;
  export type Result<T, E> = { tag: 'ok', val: T } | { tag: 'err', val: E };
}
