"""TensorFlow as a PBH engine (pbh-engine.json; the contract: pbh_worker/engine.py): a tf.function, XLA on request.

The harness gives every engine the ONNX export of a SavedModel or .keras file (python/model_convert); its metadata
names the source (pbh.source.path, checked by sha256) and its inputs and outputs as PBH names them (pbh.source.io:
the serving_default signature's keys, or the Keras model's input names and output keys). This engine runs that
source.
- load: intra- and inter-op threads set before TensorFlow's runtime starts (it refuses changes afterwards; one worker
  serves one cell); a tf.function over the SavedModel's serving_default signature or the Keras model
  (training=False), with jit_compile from options.jitCompile, traced once at load on the cell's input shapes. What executed
  is read from that traced graph: the element type of its compute ops (Conv2D, MatMul and kin), after XLA too.
- bind: the batch's arrays become tf tensors once; its call is the tf.function on them, what a deployment of the
  function pays per request (the outputs are ready when it returns: eager execution on the CPU is synchronous).
- layers: TensorFlow's own step stats (RunMetadata with FULL_TRACE) of the frozen graph of that function, run by a
  tf.compat.v1 Session: every kernel's time as TensorFlow's executor records it. This is the graph executor, never
  XLA's clusters, so with jitCompile the table shows the graph's kernels, not the compiled ones (said in the facts).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from pbh_worker import About, Engine, Layer, Loaded, Model, Precision, TensorSpec, WorkerError, serve  # noqa: E402

COMPUTE_OPS = {"Conv2D", "Conv3D", "DepthwiseConv2dNative", "MatMul", "BatchMatMulV2", "BatchMatMulV3", "_FusedConv2D", "_FusedMatMul", "Einsum", "Conv2DBackpropInput"}
PRECISION = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16", "float64": "fp64"}


def sha256(path: str) -> str:
    """As python/model_convert hashes a source: a file's bytes, or every file of a folder with its relative path."""
    digest = hashlib.sha256()
    files = [path] if os.path.isfile(path) else sorted(os.path.join(d, f) for d, _, names in os.walk(path) for f in names)
    for file in files:
        if file != path:
            digest.update(os.path.relpath(file, path).encode() + b"\0")
        with open(file, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def recorded_source(path: str) -> tuple[str, str, dict[str, Any]]:
    """The SavedModel or .keras an ONNX export was made from, its format, and its inputs and outputs (pbh.source.io)."""
    import onnx  # noqa: PLC0415

    meta = {p.key: p.value for p in onnx.load(path, load_external_data=False).metadata_props}
    source, kind = meta.get("pbh.source.path"), meta.get("pbh.source.format")
    if kind == "tflite":
        raise WorkerError("unsupported_model", f"{source} is a .tflite model: run it on the litert engine (TensorFlow runs SavedModel folders and .keras files)")
    if kind not in ("savedmodel", "keras") or not source:
        raise WorkerError("unsupported_model", f"TensorFlow runs SavedModel folders and .keras files, and {path} was not converted from one: name the SavedModel or .keras in models[].path")
    if not os.path.exists(source) or sha256(source) != meta.get("pbh.source.sha256"):
        raise WorkerError("unsupported_model", f"{source}, which {path} was converted from, is gone or changed since: run pbh run again to convert it anew")
    return source, kind, json.loads(meta["pbh.source.io"])


def set_threads(intra: int | None, inter: int | None) -> None:
    for value, get, put, what in (
        (intra, tf.config.threading.get_intra_op_parallelism_threads, tf.config.threading.set_intra_op_parallelism_threads, "threads"),
        (inter, tf.config.threading.get_inter_op_parallelism_threads, tf.config.threading.set_inter_op_parallelism_threads, "interOpThreads"),
    ):
        if value is None or get() == value:
            continue
        try:
            put(value)
        except RuntimeError as e:
            raise WorkerError("bad_request", f"options.{what}={value}: TensorFlow's runtime already started in this worker with {get() or 'its default'} ({e})", fatal=True) from e


class TensorFlow(Engine):
    def about(self) -> About:
        onednn = os.environ.get("TF_ENABLE_ONEDNN_OPTS", "1 (default)")
        return About(tf.__version__, ["cpu"], {"build": "tensorflow-cpu", "onednn": onednn, "xla": "tf.function(jit_compile=True) on request"})

    def load(self, model: Model) -> Loaded:
        if model.device != "cpu":
            raise WorkerError("bad_request", f"the TensorFlow engine runs on cpu (tensorflow-cpu), not {model.device!r}")
        options = model.options
        set_threads(options.get("threads"), options.get("interOpThreads"))
        path, kind, io = recorded_source(model.path)
        self.input_names = [s["name"] for s in io["inputs"]]
        self.output_names = [s["name"] for s in io["outputs"]]
        shapes = {i["name"]: i["shape"] for i in model.inputs}
        start = time.perf_counter()
        try:
            if kind == "savedmodel":
                # The loaded object owns the variables the signature reads: it lives as long as the engine.
                self.saved = tf.saved_model.load(path)
                signature = self.saved.signatures["serving_default"]
                declared = signature.structured_input_signature[1]
                dtypes = {name: spec.dtype for name, spec in declared.items()}
                call = lambda *xs: signature(**dict(zip(self.input_names, xs)))  # noqa: E731
            else:
                import keras  # noqa: PLC0415

                net = keras.saving.load_model(path, compile=False)
                dtypes = {t.name: tf.as_dtype(t.dtype) for t in net.inputs}
                names = self.output_names

                def call(*xs):
                    out = net(list(xs) if len(xs) > 1 else xs[0], training=False)
                    return out if isinstance(out, dict) else dict(zip(names, out if isinstance(out, (list, tuple)) else [out]))
        except Exception as e:  # noqa: BLE001 - loaders raise many types; the message names the file
            raise WorkerError("unsupported_model", f"TensorFlow cannot load {path}: {type(e).__name__}: {e}") from e
        load_ms = (time.perf_counter() - start) * 1000
        # The first axis is the batch; any other axis the harness left open stays open in the trace.
        self.specs = [tf.TensorSpec([model.batch_size if i == 0 else d if isinstance(d, int) and d > 0 else None for i, d in enumerate(shapes[name])], dtypes[name], name=name) for name in self.input_names]
        # No input_signature: tf.function then matches each call's arguments to its one trace by their type, the
        # cheaper path a deployment's plain tf.function takes (validating a signature costs more a call).
        # jit_compile=None, not False, without XLA: an explicit False marks the function must-not-compile, a slower
        # call path than a plain tf.function's (docs/measurements.md, bench:litert).
        self.function = tf.function(call, jit_compile=True if options["jitCompile"] else None)
        start = time.perf_counter()
        try:
            example = [tf.zeros([d or 1 for d in s.shape], s.dtype) for s in self.specs]
            self.concrete = self.function.get_concrete_function(*example)
            results = self.function(*example)
        except Exception as e:  # noqa: BLE001 - tracing and XLA raise many types; the message says which part failed
            raise WorkerError("unsupported_model", f"TensorFlow cannot run {path} as a tf.function{' with XLA (jitCompile)' if options['jitCompile'] else ''}: {type(e).__name__}: {str(e)[:1500]}") from e
        trace_ms = (time.perf_counter() - start) * 1000
        outputs = [TensorSpec(name, results[name].dtype.name, list(results[name].shape)) for name in self.output_names]
        precision = self._precision()
        if model.precision != precision.executed:
            raise WorkerError("unsupported_precision", f"TensorFlow runs {path} in its own precision, {precision.executed}, not {model.precision}: save the model in {model.precision}")
        facts = {
            "source": path,
            "source_format": kind,
            "jit_compile": bool(options["jitCompile"]),
            "intra_op_threads": tf.config.threading.get_intra_op_parallelism_threads(),
            "inter_op_threads": tf.config.threading.get_inter_op_parallelism_threads(),
            "onednn": os.environ.get("TF_ENABLE_ONEDNN_OPTS", "1 (default)"),
            "load_ms": load_ms,
            "trace_and_first_run_ms": trace_ms,
            "layers_from": "step stats of the frozen graph in a tf.compat.v1 Session (graph executor, no XLA)",
        }
        inputs = [TensorSpec(s.name, s.dtype.name, list(s.shape)) for s in self.specs]
        # 0 means TensorFlow's default (one per core), which it does not say as a number.
        threads = tf.config.threading.get_intra_op_parallelism_threads() or None
        return Loaded(inputs, outputs, precision, threads=threads, facts=facts)

    def _precision(self) -> Precision:
        kinds: dict[str, int] = {}
        graphs = [self.concrete.graph.as_graph_def()]
        nodes = [n for g in graphs for n in g.node] + [n for g in graphs for f in g.library.function for n in f.node_def]
        for node in nodes:
            if node.op in COMPUTE_OPS and "T" in node.attr:
                name = tf.as_dtype(node.attr["T"].type).name
                kinds[name] = kinds.get(name, 0) + 1
        if not kinds:
            raise WorkerError("unsupported_model", "the traced function has no compute op (convolution, matmul) whose type says what it computes in")
        main = max(kinds, key=lambda k: kinds[k])
        said = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
        return Precision(PRECISION.get(main, main), f"the traced tf.function's compute ops (convolutions, matmuls) are {said}")

    def bind(self, batch):
        missing = set(self.input_names) - set(batch)
        if missing:
            raise WorkerError("bad_request", f"the batch lacks inputs {sorted(missing)}")
        tensors = [tf.constant(batch[name]) for name in self.input_names]
        function = self.function
        return lambda: function(*tensors)

    def outputs(self, result: Any) -> dict[str, np.ndarray]:
        return {name: result[name].numpy() for name in self.output_names}

    def layers(self, batch, iterations):
        from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2  # noqa: PLC0415

        if not hasattr(self, "session"):
            plain = tf.function(self.function.python_function, input_signature=self.specs).get_concrete_function()
            frozen = convert_variables_to_constants_v2(plain)
            graph = tf.Graph()
            with graph.as_default():
                tf.compat.v1.import_graph_def(frozen.graph.as_graph_def(), name="")
            config = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=tf.config.threading.get_intra_op_parallelism_threads(), inter_op_parallelism_threads=tf.config.threading.get_inter_op_parallelism_threads())
            self.session = tf.compat.v1.Session(graph=graph, config=config)
            self.feeds = [t.name for t in frozen.inputs if t.dtype != tf.resource]
            self.fetches = [t.name for t in frozen.outputs]
            self.graph = graph
        feed = {name: batch[spec.name] for name, spec in zip(self.feeds, self.specs)}
        options = tf.compat.v1.RunOptions(trace_level=tf.compat.v1.RunOptions.FULL_TRACE)
        totals: dict[str, list[float]] = {}
        for _ in range(iterations):
            metadata = tf.compat.v1.RunMetadata()
            self.session.run(self.fetches, feed_dict=feed, options=options, run_metadata=metadata)
            for device in metadata.step_stats.dev_stats:
                for node in device.node_stats:
                    if node.node_name in ("_SOURCE", "_SINK"):
                        continue
                    # The kernel that ran, as the executor labels it ("name = _FusedConv2D(...)"): grappler's
                    # fusions keep the last fused node's name, so the graph's own op type would say Relu.
                    label = node.timeline_label.split(" = ", 1)[1].split("(", 1)[0] if " = " in node.timeline_label else node.timeline_label.split(" ", 1)[0]
                    entry = totals.setdefault(node.node_name, [0.0, 0, label])
                    entry[0] += (node.op_end_rel_nanos or node.op_end_rel_micros * 1000) - (node.op_start_rel_nanos or node.op_start_rel_micros * 1000)
                    entry[1] += 1
        return [Layer(name, op, total / calls, calls) for name, (total, calls, op) in totals.items()]

    def close(self) -> None:
        if hasattr(self, "session"):
            self.session.close()


if __name__ == "__main__":
    serve(TensorFlow())
