"""Helpers for python/generate_suite.py: numpy training, ONNX export, light-model repair, datasets, checks."""
