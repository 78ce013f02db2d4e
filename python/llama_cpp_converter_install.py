"""Keeps llama.cpp's Hugging Face to GGUF converter in the venv, from the llama-cpp-python sdist that was built.

    .venv/bin/python python/llama_cpp_converter_install.py     (pbh doctor --fix --engine llama-cpp runs it)

No PyPI package ships convert_hf_to_gguf.py (gguf has the writer, llama-cpp-python's wheel the runtime only); the
sdist of the installed llama-cpp-python carries it in vendor/llama.cpp with its conversion/ package and the gguf-py
it is written against (ahead of gguf 0.19 on PyPI), all three kept. pip downloads
that sdist again (its cache holds it after the build), and the script and package are written to site-packages as
the package llama_cpp_converter, whose SOURCE names the sdist. A no-op when it is there for the installed version.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
from importlib.metadata import version

PACKAGE = "llama_cpp_converter"
KEPT = ("convert_hf_to_gguf.py", "conversion/", "gguf-py/gguf/", "LICENSE")


def main() -> None:
    release = version("llama_cpp_python")
    source = f"llama.cpp convert_hf_to_gguf.py from the llama-cpp-python {release} sdist"
    target = os.path.join(sysconfig.get_paths()["purelib"], PACKAGE)
    marker = os.path.join(target, "__init__.py")
    if os.path.isfile(marker) and f"SOURCE = {source!r}" in open(marker, encoding="utf-8").read():
        return
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-d", tmp, f"llama-cpp-python=={release}"], check=True)
        (sdist,) = [os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith(".tar.gz")]
        partial = target + ".partial"
        shutil.rmtree(partial, ignore_errors=True)
        with tarfile.open(sdist) as tar:
            for member in tar.getmembers():
                # llama_cpp_python-X/vendor/llama.cpp/<kept path>
                parts = member.name.split("/", 3)
                if len(parts) == 4 and parts[1:3] == ["vendor", "llama.cpp"] and member.isfile() and any(parts[3] == k or (k.endswith("/") and parts[3].startswith(k)) for k in KEPT):
                    out = os.path.join(partial, parts[3])
                    os.makedirs(os.path.dirname(out), exist_ok=True)
                    with tar.extractfile(member) as src, open(out, "wb") as dst:  # type: ignore[union-attr]
                        shutil.copyfileobj(src, dst)
        if not os.path.isfile(os.path.join(partial, "convert_hf_to_gguf.py")):
            sys.exit(f"{sdist} holds no vendor/llama.cpp/convert_hf_to_gguf.py: this llama-cpp-python release moved it; pin one that ships it")
        with open(os.path.join(partial, "__init__.py"), "w", encoding="utf-8") as f:
            f.write(f'"""llama.cpp\'s Hugging Face to GGUF converter, kept by python/llama_cpp_converter_install.py."""\n\nSOURCE = {source!r}\n')
        shutil.rmtree(target, ignore_errors=True)
        os.replace(partial, target)
    print(f"{target}: {source}")


if __name__ == "__main__":
    main()
