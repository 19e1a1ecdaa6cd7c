/**
 * The admin API's route contract: capabilities and the composition root describe their endpoints
 * with it, and the admin listener (`src/admin/`) serves them. Kept here, at the bottom, so a
 * capability can own its routes without importing the listener.
 */

/** A reply from an admin route: status and a JSON body, or a text body with its content type. */
export interface AdminReply {
  readonly status: number;
  readonly json?: unknown;
  readonly text?: string;
  readonly contentType?: string;
}

/** What a route handler receives. */
export interface AdminRequest {
  readonly url: URL;
  /** Parsed JSON body of a POST/PUT (undefined when empty). */
  readonly body: unknown;
  /**
   * The request's headers, names in lower case (absent when a test calls a handler directly).
   * Routes that authenticate callers themselves (the agent API's per-agent bearer credentials)
   * read `authorization` here.
   */
  readonly headers?: Readonly<Record<string, string | string[] | undefined>>;
}

/**
 * One admin endpoint. A `mutating` route needs the admin token (`Authorization: Bearer <token>`);
 * other routes are open on the admin listener's address, or check their own credentials (the
 * agent API: `src/capabilities/agents/`).
 */
export interface AdminRoute {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly path: string;
  readonly mutating: boolean;
  handle(req: AdminRequest): AdminReply | Promise<AdminReply>;
}

/** Where routes are added: the admin listener, or a test's list. */
export interface RouteSink {
  /** Adds (or replaces) the route for its method and path. */
  route(r: AdminRoute): void;
}
