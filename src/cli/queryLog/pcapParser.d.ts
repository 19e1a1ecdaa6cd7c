// Types of the pcap-parser package (it ships none): the parts src/cli/queryLog/captureQueries.ts uses.
declare module 'pcap-parser' {
  import type { EventEmitter } from 'node:events';
  import type { Readable } from 'node:stream';

  /** The file's header (libpcap format 2.4). */
  export interface GlobalHeader {
    readonly magicNumber: number;
    readonly majorVersion: number;
    readonly minorVersion: number;
    readonly snapshotLength: number;
    /** LINKTYPE_* (1 Ethernet, 113 Linux cooked, 276 Linux cooked v2, 0 BSD loopback, 101 raw IP). */
    readonly linkLayerType: number;
  }

  /** One captured frame. */
  export interface Packet {
    readonly header: {
      readonly timestampSeconds: number;
      readonly timestampMicroseconds: number;
      readonly capturedLength: number;
      readonly originalLength: number;
    };
    readonly data: Buffer;
  }

  /** Emits `globalHeader`, `packet` for each frame, `error`, then `end`. */
  export function parse(input: string | Readable): EventEmitter;
}
