"""pbh quantize's Python side: INT8 post-training quantization of ONNX models with kept libraries only.

ONNX Runtime's quantization tool (static QDQ with calibration, dynamic) and NNCF's post-training quantization; run as
`python -m quantize` from the project venv (PYTHONPATH=<repo>/python); `pbh quantize` drives it.
"""
