declare module 'warden:plugin/log@0.1.0' {
  /**
   * Records a message in the host's log.
   */
  export function log(level: Level, message: string): void;
  /**
   * Severity.
   * # Variants
   * 
   * ## `"trace"`
   * 
   * ## `"debug"`
   * 
   * ## `"info"`
   * 
   * ## `"warn"`
   * 
   * ## `"error"`
   */
  export type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error';
}
