declare module 'warden:plugin/fs@0.1.0' {
  /**
   * The session's working directory (relative paths resolve against it).
   */
  export function cwd(): string;
  /**
   * Reads a whole file.
   */
  export function read(path: string): Uint8Array;
  /**
   * Creates or replaces a file.
   */
  export function write(path: string, contents: Uint8Array): void;
  /**
   * Appends to a file, creating it if missing. One call is one `write` on a file opened
   * for appending, so lines appended by concurrent calls never interleave or overwrite
   * each other (a log written by hooks running in parallel loses nothing).
   */
  export function append(path: string, contents: Uint8Array): void;
  /**
   * Metadata of a path.
   */
  export function stat(path: string): Metadata;
  /**
   * Entries of a directory, sorted by name.
   */
  export function listDir(path: string): Array<DirEntry>;
  /**
   * Creates a directory and its missing parents.
   */
  export function createDir(path: string): void;
  /**
   * Removes a file.
   */
  export function removeFile(path: string): void;
  /**
   * Why an access failed.
   * # Variants
   * 
   * ## `"not-found"`
   * 
   * No such file or directory.
   * ## `"denied"`
   * 
   * Refused by the grant or a permission rule.
   * ## `"not-a-directory"`
   * 
   * A directory was expected.
   * ## `"is-a-directory"`
   * 
   * A file was expected.
   * ## `"already-exists"`
   * 
   * The target already exists.
   * ## `"invalid-path"`
   * 
   * The path is malformed.
   * ## `"too-large"`
   * 
   * The file exceeds the host's size limit.
   * ## `"io"`
   * 
   * Any other I/O failure.
   */
  export type ErrorCode = 'not-found' | 'denied' | 'not-a-directory' | 'is-a-directory' | 'already-exists' | 'invalid-path' | 'too-large' | 'io';
  /**
   * An error with a message naming the path and the rule or grant involved.
   */
  export interface FsError {
    /**
     * Machine-readable kind.
     */
    code: ErrorCode,
    /**
     * Human-readable detail.
     */
    message: string,
  }
  /**
   * Kind of a directory entry.
   * # Variants
   * 
   * ## `"file"`
   * 
   * ## `"directory"`
   * 
   * ## `"symlink"`
   * 
   * ## `"other"`
   */
  export type Kind = 'file' | 'directory' | 'symlink' | 'other';
  /**
   * File metadata.
   */
  export interface Metadata {
    /**
     * Entry kind (of the link itself for symlinks).
     */
    kind: Kind,
    /**
     * Size in bytes.
     */
    size: bigint,
    /**
     * Modification time, milliseconds since the Unix epoch, if known.
     */
    modifiedMs?: bigint,
  }
  /**
   * One directory entry.
   */
  export interface DirEntry {
    /**
     * File name (not a path).
     */
    name: string,
    /**
     * Entry kind.
     */
    kind: Kind,
  }
}
