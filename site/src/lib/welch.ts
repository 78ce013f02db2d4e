/**
 * Welch's test and the power statement History uses: core's (packages/core/src/stats/welch.ts), the same as
 * `pbh history` and `pbh compare` use, re-exported so the site's pages keep one import.
 */
export { detectableChange, welchTTest, type Detectable, type WelchResult } from '@pbh/core';
