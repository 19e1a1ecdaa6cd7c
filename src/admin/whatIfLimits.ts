/**
 * Most queries in one `POST /what-if/replay` request (the CLI sends a query log in batches of this
 * size). A module of its own with no imports: `gslbd ctl` reads it without loading the engine.
 */
export const MAX_REPLAY_QUERIES = 5000;
