"""Converters of model files born in other frameworks to ONNX (python -m model_convert: see __main__.py)."""


class BadInput(Exception):
    """The model cannot be converted as it is; the message says why and what to do."""
