declare module 'warden:plugin/http@0.1.0' {
  /**
   * Sends a request and waits for the whole response.
   */
  export function fetch(request: Request): Response;
  /**
   * A request.
   */
  export interface Request {
    /**
     * `GET`, `POST`, ...
     */
    method: string,
    /**
     * Absolute `http://` or `https://` URL.
     */
    url: string,
    /**
     * Request headers.
     */
    headers: Array<[string, string]>,
    /**
     * Request body.
     */
    body?: Uint8Array,
    /**
     * Give up after this many milliseconds (capped by the call's deadline).
     */
    timeoutMs?: number,
  }
  /**
   * A response.
   */
  export interface Response {
    /**
     * Status code.
     */
    status: number,
    /**
     * Response headers.
     */
    headers: Array<[string, string]>,
    /**
     * Response body (capped by the host).
     */
    body: Uint8Array,
  }
  /**
   * Why the request failed.
   */
  export type HttpError = HttpErrorDenied | HttpErrorInvalidUrl | HttpErrorFailed | HttpErrorTimeout;
  /**
   * Refused by the grant or a WebFetch rule.
   */
  export interface HttpErrorDenied {
    tag: 'denied',
    val: string,
  }
  /**
   * The URL is malformed or uses an unsupported scheme.
   */
  export interface HttpErrorInvalidUrl {
    tag: 'invalid-url',
    val: string,
  }
  /**
   * Connection, TLS or protocol failure.
   */
  export interface HttpErrorFailed {
    tag: 'failed',
    val: string,
  }
  /**
   * The timeout elapsed.
   */
  export interface HttpErrorTimeout {
    tag: 'timeout',
  }
}
