#!/usr/bin/env node
// Committed with its executable bit so `npx pbh` works before and after builds; the CLI itself is compiled TypeScript.
await import('../dist/cli/main.js');
