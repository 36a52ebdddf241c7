/// <reference path="./interfaces/warden-plugin-env.d.ts" />
/// <reference path="./interfaces/warden-plugin-exec.d.ts" />
/// <reference path="./interfaces/warden-plugin-fs.d.ts" />
/// <reference path="./interfaces/warden-plugin-http.d.ts" />
/// <reference path="./interfaces/warden-plugin-log.d.ts" />
/// <reference path="./interfaces/warden-plugin-types.d.ts" />
declare module 'warden:plugin/hook@0.1.0' {
  export type Event = import('warden:plugin/types@0.1.0').Event;
  export type HookResult = import('warden:plugin/types@0.1.0').HookResult;
  export type * as WardenPluginEnv010 from 'warden:plugin/env@0.1.0'; // import warden:plugin/env@0.1.0
  export type * as WardenPluginExec010 from 'warden:plugin/exec@0.1.0'; // import warden:plugin/exec@0.1.0
  export type * as WardenPluginFs010 from 'warden:plugin/fs@0.1.0'; // import warden:plugin/fs@0.1.0
  export type * as WardenPluginHttp010 from 'warden:plugin/http@0.1.0'; // import warden:plugin/http@0.1.0
  export type * as WardenPluginLog010 from 'warden:plugin/log@0.1.0'; // import warden:plugin/log@0.1.0
  export type * as WardenPluginTypes010 from 'warden:plugin/types@0.1.0'; // import warden:plugin/types@0.1.0
  /**
  * Handles one event.
  */
  export function handle(event: Event): HookResult;
}
