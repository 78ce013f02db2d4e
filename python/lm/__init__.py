"""PBH's bundled tiny byte-level language model: corpus, jax training, ONNX export with a key-value cache."""
