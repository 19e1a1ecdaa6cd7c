import type { z } from 'zod';
import type { Location } from '../../core/location/location.js';
import type { Tiling } from '../../core/lpm/tiling.js';
import type { LoadMode, SkippedLines } from './delimitedFile.js';
import type { LocationTable } from './locationTable.js';

/**
 * The contract of a location-data format: the `format` value of a `geo.sources[]` entry, the
 * keys its sources may carry, and the loader that reads one file of it. Each format is one file
 * (`mmdbSource.ts`, `netscalerSource.ts`, …) and one line in `locationFormats.ts`; the `geo`
 * schema (`geoSchema.ts`) and the image builder (`buildImage.ts`) are derived from that list.
 *
 * `Options` is the zod shape of the format's own keys. The keys of every format are merged into
 * the one source object of the schema (so `gslbd schema` lists each key once, and a source may
 * carry a key of another format, which its loader ignores); formats that share a key share its
 * schema object. A key that does not accept absence is required on this format's sources only
 * (`geoSchema.ts` `geoSourceSchemaFor`).
 */
export interface LocationFormat<Options extends z.ZodRawShape = z.ZodRawShape> {
  /** The `geo.sources[].format` value. */
  readonly name: string;
  /** Its keys of a source besides `format`, `path` and `package` (`{}` when it has none). */
  readonly options: Options;
  /**
   * Reads one source file.
   * @param file The file, resolved (relative to the configuration file, or inside an npm package).
   * @param source The validated source entry, with this format's options.
   * @throws SourceLineError (`file:line: reason`) for a bad line in strict mode; Error when the
   *   file cannot be read or is not of this format. The builder prefixes `location source NAME: `.
   */
  load(file: string, source: SourceReference & z.output<z.ZodObject<Options>>, context: SourceLoadContext): LoadedSource;
}

/**
 * The keys every `geo.sources[]` entry has, whatever its format: exactly one of `path` or
 * `package`. A type alias, not an interface, so a format's source type (this and its options) is
 * assignable to the list's general one.
 */
export type SourceReference = {
  readonly format: string;
  readonly path?: string | undefined;
  readonly package?: string | undefined;
};

/** What a loader gets besides its file: where locations are interned, and how bad lines are treated. */
export interface SourceLoadContext {
  /** The build's location table: a location layer's tiling values are ids from `table.intern`. */
  readonly table: LocationTable;
  readonly mode: LoadMode;
  /** Where a lenient load counts and lists the lines it skipped. */
  readonly skipped: SkippedLines;
}

/** A source resolved into one tiling per address family. */
export interface FamilyTilings {
  readonly v4: Tiling;
  readonly v6: Tiling;
}

/**
 * What one source gives the build (src/capabilities/geo/README.md, "Order"): location layers are
 * applied in source order, each replacing the ones before where it has data; overlays then
 * refine the resulting locations, in source order.
 */
export type LoadedSource = LocationLayer | OverlayLayer;

/** Locations: tiling values are location ids of the context's table (0 = no data). */
export interface LocationLayer extends FamilyTilings {
  readonly kind: 'locations';
}

/** A refinement of locations (the ASN overlay): tiling values are the overlay's own (0 = no data). */
export interface OverlayLayer extends FamilyTilings {
  readonly kind: 'overlay';
  /** The location an address with `location` and overlay value `value` (not 0) ends up with. */
  refine(location: Location, value: number): Location;
}
