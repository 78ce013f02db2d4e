export * from './site-data.js';
export { readSiteData } from './read-site-data.js';
export { SITE_BUILD_LOCKED_EXIT } from './site-build-exit.js';
// What the site reads beside the contract: the noisy rule, Welch's test and change points over history.
export * from './noise.js';
export * from '../stats/welch.js';
export * from '../history/index.js';
