"""Generate PBH's TensorFlow-born test models and their data into .cache/tf-models.

    .venv/bin/python python/generate_tf_models.py [--out .cache/tf-models] [--force]    (npm run generate:tf)

Needs the TensorFlow extra (npx pbh doctor --fix --engine tensorflow). From seed 0 and scikit-learn's digits (the
suite's split, python/suite/datasets.py), in NHWC as TensorFlow models take images:
  models/digits_cnn.keras          Keras CNN, input `pixels` float32 [N,8,8,1] = pixel/16, output `logits` [N,10]
  models/digits_cnn_savedmodel/    the same model as a SavedModel (keras Model.export: a serving_default signature)
  models/digits_cnn.tflite         the same model through the LiteRT converter, float32, batch 1
  models/digits_cnn_int8.tflite    post-training full-integer quantization (calibrated on 200 training images):
                                   int8 weights, activations, input and output, with the model's scale and zero point
  models/two_heads.keras, models/two_heads.tflite
                                   two inputs (`pixels` [N,8,8,1], `extra` [N,4]) and two outputs (`logits` [N,10],
                                   `embedding` [N,16]), named, for engines that bind several tensors by name
  models/gelu_mlp.tflite           an untrained MLP whose GELU the LiteRT converter keeps as one op (tf2onnx has none)
  data/digits_nhwc_x.npy           the test split's images [n,8,8,1] = pixel/16; data/digits_y.npy its labels
  data/extra_x.npy                 seeded standard normals [n,4] for two_heads' `extra`
Its own stamp (sha256 of this script) makes a current build a no-op; runs serialise on <out>.lock and build in a
temporary sibling folder that is swapped in. Training is two epochs on 1257 images: seconds.
"""

from __future__ import annotations

import argparse
import fcntl
import glob
import hashlib
import os
import shutil
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(HERE)
STAMP = ".stamp"
SEED = 0
CALIBRATION_SAMPLES = 200


def source_sha256() -> str:
    with open(os.path.abspath(__file__), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def log(t0: float, msg: str) -> None:
    print(f"[{time.perf_counter() - t0:6.1f}s] {msg}", flush=True)


def build(out: str, t0: float) -> None:
    import numpy as np  # noqa: PLC0415 - imported after the up-to-date check, which then costs milliseconds
    import keras  # noqa: PLC0415
    import tensorflow as tf  # noqa: PLC0415

    sys.path.insert(0, HERE)
    from suite.datasets import DigitsSplit, digits_split  # noqa: PLC0415

    keras.utils.set_random_seed(SEED)
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    os.makedirs(os.path.join(out, "models"))
    os.makedirs(os.path.join(out, "data"))
    split = digits_split(SEED)
    train_x = DigitsSplit.scaled(split.train_pixels)[..., None]
    test_x = DigitsSplit.scaled(split.test_pixels)[..., None]
    extra_train = np.random.default_rng(SEED).standard_normal((len(train_x), 4)).astype(np.float32)
    extra_test = np.random.default_rng(SEED + 1).standard_normal((len(test_x), 4)).astype(np.float32)
    np.save(os.path.join(out, "data", "digits_nhwc_x.npy"), test_x)
    np.save(os.path.join(out, "data", "digits_y.npy"), split.test_labels)
    np.save(os.path.join(out, "data", "extra_x.npy"), extra_test)

    pixels = keras.Input((8, 8, 1), name="pixels")
    x = keras.layers.Conv2D(16, 3, padding="same", activation="relu", name="conv1")(pixels)
    x = keras.layers.MaxPooling2D(2, name="pool")(x)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu", name="conv2")(x)
    x = keras.layers.Flatten(name="flatten")(x)
    logits = keras.layers.Dense(10, name="logits")(x)
    cnn = keras.Model(pixels, logits, name="digits_cnn")
    cnn.compile(optimizer=keras.optimizers.Adam(3e-3), loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    cnn.fit(train_x, split.train_labels, epochs=2, batch_size=32, verbose=0)
    accuracy = float(cnn.evaluate(test_x, split.test_labels, verbose=0)[1])
    log(t0, f"digits_cnn trained: test accuracy {accuracy:.3f}")
    cnn.save(os.path.join(out, "models", "digits_cnn.keras"))
    cnn.export(os.path.join(out, "models", "digits_cnn_savedmodel"), verbose=False)

    def tflite(model, path: str, int8: bool = False) -> None:
        converter = tf.lite.TFLiteConverter.from_keras_model(model)
        if int8:
            def representative():
                for image in train_x[:CALIBRATION_SAMPLES]:
                    yield [image[None]]

            converter.optimizations = [tf.lite.Optimize.DEFAULT]
            converter.representative_dataset = representative
            converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
            converter.inference_input_type = tf.int8
            converter.inference_output_type = tf.int8
        with open(path, "wb") as f:
            f.write(converter.convert())

    tflite(cnn, os.path.join(out, "models", "digits_cnn.tflite"))
    tflite(cnn, os.path.join(out, "models", "digits_cnn_int8.tflite"), int8=True)
    log(t0, "digits_cnn: .keras, SavedModel, .tflite float32 and int8 written")

    extra = keras.Input((4,), name="extra")
    features = keras.layers.Flatten(name="flat_pixels")(pixels)
    embedding = keras.layers.Dense(16, activation="tanh", name="embedding")(keras.layers.Concatenate(name="join")([features, extra]))
    heads = keras.Model([pixels, extra], {"logits": keras.layers.Dense(10, name="logits")(embedding), "embedding": embedding}, name="two_heads")
    heads.compile(optimizer="adam", loss={"logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True), "embedding": None})
    heads.fit({"pixels": train_x, "extra": extra_train}, {"logits": split.train_labels}, epochs=1, batch_size=32, verbose=0)
    heads.save(os.path.join(out, "models", "two_heads.keras"))
    tflite(heads, os.path.join(out, "models", "two_heads.tflite"))
    log(t0, "two_heads: .keras and .tflite written")

    # GELU: the LiteRT converter writes it as one GELU op, which tf2onnx 1.17.0 has no converter for.
    hidden = keras.layers.Dense(32, activation="gelu", name="gelu_dense")(keras.layers.Flatten(name="flat")(pixels))
    gelu = keras.Model(pixels, keras.layers.Dense(10, name="logits")(hidden), name="gelu_mlp")
    tflite(gelu, os.path.join(out, "models", "gelu_mlp.tflite"))
    log(t0, "gelu_mlp: .tflite written (untrained)")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(REPO_ROOT, ".cache", "tf-models"), help="output folder (default: <repo>/.cache/tf-models)")
    ap.add_argument("--force", action="store_true", help="rebuild even when the stamp says the models are current")
    args = ap.parse_args(argv)
    sys.dont_write_bytecode = True
    out = os.path.abspath(args.out)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    t0 = time.perf_counter()
    stamp = source_sha256()
    with open(f"{out}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(os.path.join(out, STAMP)) as f:
                current = f.read().strip() == stamp
        except OSError:
            current = False
        if current and not args.force:
            log(t0, f"tf-models at {out} are up to date (generator sha256 {stamp[:12]}); nothing to do (--force rebuilds)")
            return 0
        for stale in glob.glob(f"{glob.escape(out)}.tmp-*") + glob.glob(f"{glob.escape(out)}.old-*"):
            shutil.rmtree(stale, ignore_errors=True)
        tmp = f"{out}.tmp-{os.getpid()}"
        try:
            build(tmp, t0)
            with open(os.path.join(tmp, STAMP), "w") as f:
                f.write(stamp + "\n")
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        old = f"{out}.old-{os.getpid()}"
        if os.path.exists(out):
            os.rename(out, old)
        os.rename(tmp, out)
        shutil.rmtree(old, ignore_errors=True)
    log(t0, f"done: tf-models at {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
