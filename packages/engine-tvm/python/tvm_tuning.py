"""MetaSchedule tuning that works with the apache-tvm 0.27.0.post1 wheel as installed here, in this process.

What the stock entry points (tune_relax, MetaScheduleTuneIRMod, static_shape_tuning_pipeline) need and why we go
around them, each checked against this install:
- `tvm.ir.save_json` segfaults (inside tvm_ffi's ToJSONGraph, apache-tvm-ffi 0.1.15.post2). LocalBuilder sends each
  candidate to a popen worker through it and the JSON database stores workloads with it, so both crash: candidates are
  built and timed here, in-process, and records live in a memory database.
- The MutateComputeLocation and MutateParallel mutators segfault when a TuneContext initialises them, and the
  evolutionary search needs mutators: the search is replay-func, i.e. each trial draws a fresh random schedule from
  the design space the default CPU rules generate (multi-level tiling, parallelize/vectorize/unroll, inlining).
- psutil and xgboost (the wheel's meta-schedule extras) are absent: thread counts are passed explicitly and no cost
  model ranks candidates - with replay-func every drawn candidate is measured anyway.
- Importing tvm.s_tir.tensor_intrin (TuneContext and the default builder do) parses hundreds of TVMScript tensor
  intrinsics for CUDA, ARM, x86, ROCm, Hexagon and RISC-V: 30-40 s on 2 cores. The default "llvm" rules used here
  tensorize nothing, so an empty module stands in for it in this worker process.
So `tune: true` is random search with real measurements, `trials_per_task` candidates per kernel, keeping the
fastest - far short of a full evolutionary MetaSchedule run, and a candidate that crashes LLVM or the CPU takes the
worker down with it (the harness records a failed Profile).
"""

from __future__ import annotations

import logging
import sys
import time
import types
from dataclasses import dataclass
from typing import Any

import numpy as np
import tvm

sys.modules.setdefault("tvm.s_tir.tensor_intrin", types.ModuleType("tvm.s_tir.tensor_intrin", "not loaded: see tvm_tuning.py"))

from tvm import relax  # noqa: E402
from tvm.ir.utils import derived_object  # noqa: E402
from tvm.s_tir import meta_schedule as ms  # noqa: E402
from tvm.s_tir.meta_schedule.builder import BuilderResult, PyBuilder  # noqa: E402
from tvm.s_tir.meta_schedule.builder.local_builder import default_build  # noqa: E402
from tvm.s_tir.meta_schedule.runner import PyRunner, RunnerFuture, RunnerResult  # noqa: E402

# The task scheduler prints a full table after every trial; keep the worker's stderr for real problems.
logging.getLogger("tvm.s_tir.meta_schedule").setLevel(logging.WARNING)


@dataclass
class TuningReport:
    tasks: int = 0
    trials: int = 0
    failed_trials: int = 0
    tuned_kernels: int = 0
    budget_exhausted: bool = False
    search: str = "meta_schedule replay-func (random design-space samples, measured in-process)"

    def facts(self) -> dict[str, Any]:
        return {
            "tune_search": self.search,
            "tune_tasks": self.tasks,
            "tune_trials": self.trials,
            "tune_failed_trials": self.failed_trials,
            "tuned_kernels": self.tuned_kernels,
            "tune_budget_exhausted": self.budget_exhausted,
        }


class _Deadline:
    def __init__(self, seconds: float):
        self.end = time.monotonic() + seconds
        self.hit = False

    def passed(self) -> bool:
        self.hit = self.hit or time.monotonic() >= self.end
        return self.hit


def _make_builder(built: dict[str, Any], deadline: _Deadline, report: TuningReport) -> Any:
    @derived_object
    class InProcessBuilder(PyBuilder):
        def build(self, build_inputs: list[Any]) -> list[Any]:
            results = []
            for item in build_inputs:
                if deadline.passed():
                    results.append(BuilderResult(None, "tuning time budget spent"))
                    continue
                try:
                    key = f"in-process:{len(built)}"
                    built[key] = default_build(item.mod, item.target, None)
                    results.append(BuilderResult(key, None))
                except Exception as e:  # noqa: BLE001 - a candidate TVM cannot build is a failed trial, not an error
                    report.failed_trials += 1
                    results.append(BuilderResult(None, f"{type(e).__name__}: {e}"))
            return results

    return InProcessBuilder()


def _make_runner(built: dict[str, Any], seed: int, number: int) -> Any:
    @derived_object
    class InProcessRunner(PyRunner):
        def run(self, runner_inputs: list[Any]) -> list[Any]:
            device = tvm.cpu()
            rng = np.random.default_rng(seed)
            futures = []
            for item in runner_inputs:
                module = built.pop(item.artifact_path)
                args = []
                for info in item.args_info:
                    _kind, dtype, shape = info.as_json()
                    data = rng.random(tuple(int(d) for d in shape)).astype(str(dtype))
                    args.append(tvm.runtime.tensor(data, device))
                evaluator = module.time_evaluator(module.entry_name, device, number=number, repeat=1)
                result = RunnerResult([float(s) for s in evaluator(*args).results], None)
                futures.append(RunnerFuture(f_done=lambda: True, f_result=lambda r=result: r))
            return futures

    return InProcessRunner()


def tune(mod: tvm.IRModule, target: tvm.target.Target, *, threads: int, trials_per_task: int, budget_s: float, seed: int) -> tuple[tvm.IRModule, TuningReport]:
    """Tune every fused kernel of `mod` and return the module with the best schedule found applied to each."""
    report = TuningReport()
    tasks = ms.relax_integration.extract_tasks(mod, target)
    report.tasks = len(tasks)
    if not tasks:
        return mod, report
    deadline = _Deadline(budget_s)
    built: dict[str, Any] = {}
    contexts = []
    for task, rand_state in zip(tasks, ms.utils.fork_seed(seed, n=len(tasks))):
        space = ms.space_generator.PostOrderApply(
            sch_rules=ms.ScheduleRule.create("llvm"),
            postprocs=ms.Postproc.create("llvm"),
            mutator_probs={},
        )
        contexts.append(
            ms.TuneContext(
                mod=task.dispatched[0],
                target=task.target,
                space_generator=space,
                search_strategy="replay-func",
                task_name=task.task_name,
                rand_state=rand_state,
                num_threads=threads,
            )
        )
    database = ms.tune.tune_tasks(
        tasks=contexts,
        task_weights=[float(task.weight) for task in tasks],
        work_dir="",
        max_trials_global=trials_per_task * len(contexts),
        max_trials_per_task=trials_per_task,
        num_trials_per_iter=trials_per_task,
        builder=_make_builder(built, deadline, report),
        runner=_make_runner(built, seed, number=3),
        database="memory",
        cost_model="random",
        measure_callbacks=[ms.measure_callback.AddToDatabase()],
        task_scheduler="round-robin",
    )
    report.budget_exhausted = deadline.hit
    records = database.get_all_tuning_records()
    report.trials = len(records)
    with target, database:
        tuned = relax.transform.MetaScheduleApplyDatabase()(mod)
    report.tuned_kernels = sum(
        1 for _, func in tuned.functions_items() if isinstance(func, tvm.tirx.PrimFunc) and func.attrs is not None and "tirx.is_scheduled" in func.attrs
    )
    return tuned, report
