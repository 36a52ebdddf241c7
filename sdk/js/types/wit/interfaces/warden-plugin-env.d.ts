declare module 'warden:plugin/env@0.1.0' {
  /**
   * The value of a granted variable, or none if unset or not granted.
   */
  export function get(key: string): string | undefined;
  /**
   * All granted variables that are set.
   */
  export function vars(): Array<[string, string]>;
}
