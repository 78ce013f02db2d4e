"""pbh prune's Python side: magnitude and Optimal Brain Compression (OBC) pruning of ONNX weights.

Run as `python -m prune` from the project venv (PYTHONPATH=<repo>/python); `pbh prune` drives it.
"""
