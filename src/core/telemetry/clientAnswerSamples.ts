import type { IpAddress } from '../net/ipAddress.js';

/** At most this many answers are kept between two drains; more are only counted (`dropped`). */
export const CLIENT_ANSWER_SAMPLE_LIMIT = 65536;

/** The answers kept since the last drain, and how many more there were. */
export interface ClientAnswerDrain {
  /** Client address (the ECS address, else the resolver's) and the data centers answered, per answer. */
  readonly answers: readonly { readonly address: IpAddress; readonly dcs: readonly string[] }[];
  /** Answers beyond {@link CLIENT_ANSWER_SAMPLE_LIMIT} since the last drain, not kept. */
  readonly dropped: number;
}

/**
 * The GSLB answers of the last few seconds with their client, kept only while {@link active}
 * (the operator console subscribes, docs/PRODUCT.md and `src/admin/README.md`): the console's map
 * locates them and keeps counts per (country, data center), never the addresses. Nothing is kept
 * while inactive, so the front doors pay one boolean test per answer; at most
 * {@link CLIENT_ANSWER_SAMPLE_LIMIT} are kept between two drains (bounded memory under a flood).
 */
export class ClientAnswerSamples {
  /** Set by the console while someone watches. */
  active = false;
  private answers: { address: IpAddress; dcs: readonly string[] }[] = [];
  private dropped = 0;

  /** Keeps one answer that named data centers `dcs` for a client at `address`. */
  add(address: IpAddress, dcs: readonly string[]): void {
    if (this.answers.length < CLIENT_ANSWER_SAMPLE_LIMIT) this.answers.push({ address, dcs });
    else this.dropped++;
  }

  /** The answers kept since the last drain; starts a new period. */
  drain(): ClientAnswerDrain {
    const out = { answers: this.answers, dropped: this.dropped };
    this.answers = [];
    this.dropped = 0;
    return out;
  }
}
