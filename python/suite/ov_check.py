"""Run exported ONNX files through OpenVINO (CPU) so export bugs surface at generation time, not in a benchmark.

The CPU plugin executes bf16 by default where the CPU has AMX or AVX-512 BF16, which would make a correct export look
wrong by ~5e-2: every check pins f32 (INFERENCE_PRECISION_HINT) and reads back what the compiled model reports.
"""

from __future__ import annotations

import numpy as np

PRECISION = 'f32'


class OpenVinoChecker:
    def __init__(self) -> None:
        import openvino as ov  # imported lazily: the slowest import of the generator
        import openvino.properties.hint as hints

        self._core = ov.Core()
        self._config = {hints.inference_precision: ov.Type.f32}
        self._precision_property = hints.inference_precision
        self.version = ov.__version__

    def run(self, path: str, feeds: dict[str, np.ndarray]) -> np.ndarray:
        """The first output for inputs fed by name, so a model with several inputs cannot get them in the wrong order."""
        compiled = self._core.compile_model(self._core.read_model(path), 'CPU', self._config)
        executed = compiled.get_property(self._precision_property).get_type_name()
        if executed != PRECISION:
            raise AssertionError(f'{path}: OpenVINO compiled for inference precision {executed} although {PRECISION} was asked for')
        names = sorted(port.get_any_name() for port in compiled.inputs)
        if names != sorted(feeds):
            raise AssertionError(f'{path}: OpenVINO reads inputs {names}, the check feeds {sorted(feeds)}')
        return np.asarray(compiled(feeds)[compiled.output(0)])

    def check_trained(self, path: str, feeds: dict[str, np.ndarray], y: np.ndarray, numpy_logits: np.ndarray) -> dict:
        """Top-1 of the ONNX file under OpenVINO (f32) on the whole test split, and its largest deviation from the numpy logits."""
        logits = self.run(path, feeds)
        if logits.shape != numpy_logits.shape:
            raise AssertionError(f'{path}: OpenVINO output shape {logits.shape} != numpy {numpy_logits.shape}')
        max_diff = float(np.abs(logits - numpy_logits).max())
        if not np.isfinite(logits).all() or max_diff > 1e-3:
            raise AssertionError(
                f'{path}: OpenVINO logits (CPU, inference precision {PRECISION}) differ from the numpy float32 forward pass '
                f'by {max_diff:.3g} (> 1e-3); the ONNX export does not match the trained network'
            )
        return {'top1': float((logits.argmax(axis=1) == y).mean()), 'max_abs_logit_diff_vs_numpy': max_diff, 'inference_precision': PRECISION}

    def check_random(self, path: str, inputs: np.ndarray, batches: tuple[int, ...] = (1, 4)) -> dict:
        """Outputs of the single input `input` must be finite, batch-size independent, and differ between inputs (all in f32)."""
        results = {}
        outs = {b: self.run(path, {'input': inputs[:b]}) for b in batches}
        for b, out in outs.items():
            if not np.isfinite(out).all():
                raise AssertionError(f'{path}: OpenVINO output at batch {b} has non-finite values')
            results[b] = out
        big = max(batches)
        spread = float(results[big].reshape(big, -1).std(axis=0).max())
        if spread == 0.0:
            raise AssertionError(f'{path}: outputs are identical for {big} different inputs; the random weights are degenerate')
        consistency = float(np.abs(results[1][0] - results[big][0]).max())
        if consistency > 1e-4:
            raise AssertionError(
                f'{path}: sample 0 gives different outputs at batch 1 and batch {big} under OpenVINO {PRECISION} (max diff {consistency:.3g})'
            )
        return {
            'batches': list(batches),
            'inference_precision': PRECISION,
            'output_shape': list(results[big].shape),
            'max_std_across_inputs': spread,
            'max_abs_diff_batch1_vs_batch': consistency,
        }
