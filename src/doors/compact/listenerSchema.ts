import { z } from 'zod';

/**
 * The compact-protocol listener (docs/protocol.md) the CoreDNS plugin connects to: a Unix socket
 * at `path` (relative paths are relative to the configuration file), created with file `mode`
 * (octal text, e.g. "0660"). Connections beyond `maxConnections` are closed at once; frames longer
 * than `maxFrameBytes` close their connection; a connection with no complete frame (HELLO, QUERY,
 * PING) for `idleTimeoutMs` is closed (shims PING when idle; the CoreDNS plugin every second).
 */
export const compactListenerSchema = z.strictObject({
  path: z
    .string()
    .min(1)
    .max(100, 'a Unix socket path has at most 100 characters')
    .describe('Unix socket path the CoreDNS plugin connects to, relative to the configuration file, at most 100 characters (restart needed).'),
  mode: z
    .string()
    .regex(/^0?[0-7]{3}$/, 'expected an octal file mode such as "0660"')
    .default('0660')
    .describe('Permission of the socket file, octal text; default "0660".'),
  maxConnections: z.number().int().min(1).max(4096).default(64).describe('Open compact-protocol connections at most; more are closed at once; default 64.'),
  maxFrameBytes: z.number().int().min(512).max(131072).default(4096).describe('Longest frame in bytes; a longer one closes its connection; default 4096.'),
  idleTimeoutMs: z
    .number()
    .int()
    .min(100)
    .max(600000)
    .default(30000)
    .describe('A connection with no complete frame (HELLO, QUERY, PING) for this many ms is closed; default 30000.'),
});

export type CompactListenerConfig = z.output<typeof compactListenerSchema>;
