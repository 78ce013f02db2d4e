import { z } from 'zod';

/** TVM build options PBH exposes; each says which TVM knob it sets. The defaults here are the only ones: the worker gets these options parsed. */
export const TVMOptionsSchema = z.strictObject({
  threads: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('TVM thread pool size (runtime.config_threadpool) and the target num-cores; unset uses every core. Untuned kernels run on one thread'),
  optLevel: z
    .number()
    .int()
    .min(0)
    .max(4)
    .default(3)
    .describe('tvm.transform.PassContext opt_level for the Relax pipeline; below 1 FuseOps is skipped and every op is its own kernel'),
  mcpu: z.string().min(1).optional().describe("LLVM -mcpu for the llvm target; unset uses LLVM's name for the host CPU (e.g. znver3)"),
  tune: z
    .boolean()
    .default(false)
    .describe('Tune every kernel with MetaSchedule (random design-space search measured in-process; see python/tvm_tuning.py). Off: TOPI default loop nests, no schedules'),
  tuneTrialsPerTask: z.number().int().min(1).default(8).describe('Candidate schedules measured per kernel when tune is on'),
  tuneBudgetS: z
    .number()
    .positive()
    .default(600)
    .describe('Wall-clock budget for tuning in seconds; candidates left once it is spent are skipped (facts.tune_budget_exhausted)'),
  cache: z
    .boolean()
    .default(true)
    .describe('Reuse a compiled library built earlier for the same model file, shapes, target, options and TVM version; a hit reports the original compile_ms with facts.cache_hit=true'),
  cacheDir: z.string().min(1).default('.cache/tvm').describe('Folder of the compiled-library cache, relative to the working directory unless absolute'),
});
export type TVMOptions = z.infer<typeof TVMOptionsSchema>;
