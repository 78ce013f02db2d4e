import type { Engine } from './engine.js';
import type { Metric } from './metric.js';
import type { Scorer } from './scorer.js';

export interface Plugin {
  name: string;
  engines?: Engine[];
  scorers?: Scorer[];
  metrics?: Metric[];
}

/** The default export of a plugin package. Identity today; the hook where validation lives. */
export function definePlugin(plugin: Plugin): Plugin {
  return plugin;
}
