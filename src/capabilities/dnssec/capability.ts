import type { z } from 'zod';
import type { ConfigProblem } from '../../core/config/load.js';
import type { AfterAnswerHook } from '../../core/contracts/frontDoor.js';
import { TYPE_CODES } from '../../core/dns/records.js';
import type { ZoneSigningKeys } from '../../core/contracts/zoneSigningKeys.js';
import type { Answer, Query } from '../../core/model/query.js';
import type { Capability, CapabilityHost, CapabilityRuntime } from '../../pipeline/capability.js';
import { AnswerSigner, NXNAME, type SignerZone, type SigningNote } from './answerSigner.js';
import { DnssecMetrics } from './dnssecMetrics.js';
import { dnssecRootSchema, type DnssecConfig } from './dnssecSchema.js';
import { checkKeyFiles, type KeyFileReport } from './keyFileChecks.js';
import { privateKeyText, type DnssecKey } from './keyFiles.js';
import { SignatureCache } from './signatureCache.js';
import { zoneContents, type ContentsConfig } from './zoneContents.js';
import { isActive, isPublished } from './zoneKeys.js';

/** Types the signer answers itself, with or without DO: the apex key sets and NXNAME (FORMERR). */
const SIGNER_ANSWERED_TYPES: ReadonlySet<number> = new Set([TYPE_CODES.DNSKEY, TYPE_CODES.CDS, TYPE_CODES.CDNSKEY, NXNAME]);

/** What the DNSSEC capability reads of the configuration: its section, and the zones and records (for NODATA type maps). */
export interface DnssecSection extends ContentsConfig {
  readonly dnssec: DnssecConfig;
}

/** A started DNSSEC capability: the runtime and its after-answer hook. */
export interface DnssecRuntime extends CapabilityRuntime<DnssecSection> {
  readonly afterAnswer: AfterAnswerHook;
  readonly zoneKeys: ZoneSigningKeys;
  prepare(config: DnssecSection): Record<string, never>;
  commit(config: DnssecSection): void;
}

/** The DNSSEC capability: the {@link Capability} members it has, and its key-file check. */
export interface DnssecCapability extends Capability<DnssecSection> {
  readonly name: 'dnssec';
  readonly schema: { readonly root: { readonly dnssec: typeof dnssecRootSchema } };
  start(host: CapabilityHost): DnssecRuntime;
  /**
   * Reads the key files of the `dnssec` section (`keyFileChecks.ts`): problems (missing files,
   * wrong zone or algorithm, no private part, mismatched halves) and warnings (world-readable
   * private files, no active key), for `check-config` and the start-up and reload checks.
   */
  keyFileReport(config: DnssecSection, configFile: string, nowMs: number): KeyFileReport;
}

/**
 * Online DNSSEC signing of the engine's answers (src/capabilities/dnssec/README.md,
 * docs/PRODUCT.md §10):
 * - `schema`: the root key `dnssec` (signed zones with their key files, signature timing, the
 *   signature cache's size);
 * - `check`: every signed zone is a configured zone, once, and holds no static DS record;
 * - `start(host)`: a runtime whose `afterAnswer` hook signs answers (`answerSigner.ts`) and whose
 *   metrics go on the engine's registry, and whose `zoneKeys` hand the keys to DNS servers that
 *   sign themselves (PowerDNS); `prepare` reads the key files (a bad one refuses the
 *   configuration, naming its key), `commit` makes the new keys and zones the ones that sign.
 */
export const dnssecCapability: DnssecCapability = {
  name: 'dnssec',
  schema: { root: { dnssec: dnssecRootSchema } },
  check(config: DnssecSection, ctx: z.RefinementCtx) {
    const zones = new Set(config.zones.map((z) => z.name));
    const seen = new Set<string>();
    config.dnssec.zones.forEach((z, i) => {
      if (!zones.has(z.zone)) ctx.addIssue({ code: 'custom', path: ['dnssec', 'zones', i, 'zone'], message: `"${z.zone}" is not a zone of zones[]` });
      if (seen.has(z.zone)) ctx.addIssue({ code: 'custom', path: ['dnssec', 'zones', i, 'zone'], message: `"${z.zone}" is signed twice` });
      seen.add(z.zone);
    });
    // The signer's referrals deny a DS at the cut (their NSEC lists NS RRSIG NSEC): a configured DS
    // there would contradict them, so secure delegations from a signed zone are refused until
    // referrals carry it (README, "Not done").
    config.zones.forEach((zone, zi) => {
      if (!seen.has(zone.name)) return;
      zone.records.forEach((r, ri) => {
        if (r.type === 'DS')
          ctx.addIssue({
            code: 'custom',
            path: ['zones', zi, 'records', ri, 'type'],
            message: `a DS record in the signed zone "${zone.name}" is not supported yet`,
          });
      });
    });
  },
  start: startDnssec,
  keyFileReport: (config, configFile, nowMs) => checkKeyFiles(config.dnssec, configFile, Math.floor(nowMs / 1000)),
};

/** A signer prepared for a configuration, waiting for its snapshot to be published. */
interface Prepared {
  readonly config: DnssecSection;
  readonly signer: AnswerSigner | undefined;
  /** The keys of each signed zone, by canonical apex. */
  readonly keys: ReadonlyMap<string, readonly DnssecKey[]>;
}

function startDnssec(host: CapabilityHost): DnssecRuntime {
  let cache: SignatureCache | undefined;
  let signer: AnswerSigner | undefined;
  let prepared: Prepared | undefined;
  let keys: ReadonlyMap<string, readonly DnssecKey[]> = new Map();
  const metrics = new DnssecMetrics(host.metrics.registry, () => cache);
  const sign = (query: Query, answer: Answer): Answer => (signer === undefined ? answer : signer.sign(query, answer));
  const afterAnswer: AfterAnswerHook = Object.assign(sign, {
    // Without the DO bit the signer answers only the apex key types and NXNAME itself
    // (answerSigner.ts); every other answer passes as the engine built it, signed zone or not.
    leavesUnchanged: (query: Query) => query.dnssecOk !== true && !SIGNER_ANSWERED_TYPES.has(query.type),
    explain(query: Query, answer: Answer) {
      const notes: SigningNote[] = [];
      const signed = signer === undefined ? answer : signer.sign(query, answer, notes);
      return { answer: signed, notes: { step: 'dnssec', signed: notes.some((n) => n.keyTags.length > 0), rrsets: notes } };
    },
  });
  const zoneKeys: ZoneSigningKeys = {
    keysOf(zone, now) {
      return keys.get(zone)?.map((k, i) => ({
        id: i + 1,
        flags: k.dnskey.flags,
        active: isActive(k.timing, now),
        published: isPublished(k.timing, now),
        privateKeyText: privateKeyText(k),
      }));
    },
  };
  return {
    afterAnswer,
    zoneKeys,
    prepare(config) {
      const report = checkKeyFiles(config.dnssec, host.file, Math.floor(host.now() / 1000));
      if (report.problems.length > 0) throw new Error(report.problems.map((p: ConfigProblem) => `${p.path}: ${p.message}`).join('; '));
      for (const w of report.warnings) host.log.warn({ path: w.path }, w.message);
      if (config.dnssec.zones.length === 0) {
        prepared = { config, signer: undefined, keys: new Map() };
        return {};
      }
      if (cache?.maxEntries !== config.dnssec.signatureCacheEntries) cache = new SignatureCache(config.dnssec.signatureCacheEntries);
      const contents = zoneContents(config);
      const zones = new Map<string, SignerZone | null>(config.zones.map((z) => [z.name, null]));
      config.dnssec.zones.forEach((z, i) => {
        zones.set(z.zone, {
          config: { zone: z.zone, keys: report.keys[i]!, dnskeyTtl: z.dnskeyTtl, cds: z.cds },
          contents: contents.get(z.zone)!,
        });
      });
      const signer = new AnswerSigner({ zones, timing: config.dnssec.signatures }, cache, () => host.now(), metrics);
      prepared = { config, signer, keys: new Map(config.dnssec.zones.map((z, i) => [z.zone, report.keys[i]!])) };
      return {};
    },
    commit(config) {
      if (prepared?.config !== config) return;
      signer = prepared.signer;
      keys = prepared.keys;
    },
    describe() {
      return { dnssec: prepared?.config.dnssec.zones.map((z) => z.zone) ?? [] };
    },
  };
}
