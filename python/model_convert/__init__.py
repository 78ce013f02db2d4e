"""Converters of model files born in other frameworks to ONNX (python -m model_convert: see __main__.py)."""

import os
import shutil


class BadInput(Exception):
    """The model cannot be converted as it is; the message says why and what to do."""


def copy_beside(folder: str, names: tuple[str, ...], target: str) -> None:
    """The files of `names` that `folder` has, copied beside the export `target` (the tokenizer and configs the
    harness and the engines read next to the ONNX file)."""
    for name in names:
        if os.path.isfile(os.path.join(folder, name)):
            shutil.copyfile(os.path.join(folder, name), os.path.join(os.path.dirname(target), name))
