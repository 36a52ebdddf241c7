declare module 'warden:plugin/exec@0.1.0' {
  /**
   * Runs `argv[0]` with the rest as arguments.
   */
  export function run(argv: Array<string>, options: Options): Output;
  /**
   * How to run the program.
   */
  export interface Options {
    /**
     * Working directory (absolute, or relative to the session's cwd).
     */
    cwd?: string,
    /**
     * Bytes written to the program's stdin.
     */
    stdin?: Uint8Array,
    /**
     * Extra environment variables (only keys the plugin was granted are passed).
     */
    env: Array<[string, string]>,
    /**
     * Kill the program after this many milliseconds (capped by the call's deadline).
     */
    timeoutMs?: number,
  }
  /**
   * What the program did.
   */
  export interface Output {
    /**
     * Exit status; -1 if killed by a signal or the timeout.
     */
    status: number,
    /**
     * Captured stdout (capped by the host).
     */
    stdout: Uint8Array,
    /**
     * Captured stderr (capped by the host).
     */
    stderr: Uint8Array,
    /**
     * True if stdout or stderr hit the cap.
     */
    truncated: boolean,
    /**
     * True if the timeout killed it.
     */
    timedOut: boolean,
  }
  /**
   * Why the program did not run.
   */
  export type ExecError = ExecErrorDenied | ExecErrorNotFound | ExecErrorFailed;
  /**
   * Refused by the grant or a Bash rule; the text names the rule.
   */
  export interface ExecErrorDenied {
    tag: 'denied',
    val: string,
  }
  /**
   * The program was not found.
   */
  export interface ExecErrorNotFound {
    tag: 'not-found',
    val: string,
  }
  /**
   * Anything else.
   */
  export interface ExecErrorFailed {
    tag: 'failed',
    val: string,
  }
}
