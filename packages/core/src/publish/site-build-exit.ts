/**
 * The exit status of a site build whose data loader met StoreLockedError (a running `pbh run` holds
 * the file), so `pbh site build` can tell that apart from any other failed build without reading its
 * output. 75 is sysexits' EX_TEMPFAIL: the same build will work once the writer is done.
 */
export const SITE_BUILD_LOCKED_EXIT = 75;
