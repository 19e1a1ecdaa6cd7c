import pkg from '../../../package.json' with { type: 'json' };

/** The gslbd version (package.json's `version`), for `gslbd --version` and `gslbd_build_info`. */
export const GSLBD_VERSION: string = pkg.version;
