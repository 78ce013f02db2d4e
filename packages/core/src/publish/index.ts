export * from './site-data.js';
export { readSiteData } from './read-site-data.js';
export { SITE_BUILD_LOCKED_EXIT } from './site-build-exit.js';
