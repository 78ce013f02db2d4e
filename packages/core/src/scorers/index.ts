import type { Scorer } from '../contracts/scorer.js';
import { agreement } from './agreement.js';
import { mae, mse } from './regression.js';
import { topK } from './topk.js';

export const builtinScorers: Scorer[] = [topK(1), topK(5), mse, mae, agreement];
export { topK, mse, mae, agreement };
