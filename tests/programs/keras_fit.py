# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""A TF1 Keras program: `model.compile(optimizer=LossScaleOptimizer(...))`.

As real TF1 Keras trees do, it passes the contrib optimizer to
`model.compile` and trains with `model.fit`, with Keras 2: TF 2.15's
`tf.keras`, or tf-keras on TF 2.16+ (`TF_USE_LEGACY_KERAS=1`, set here before
TensorFlow is imported). The model computes in float16 with float32
variables, and its gradients underflow in float16 unless the loss is scaled:
one weight `w`, prediction `w * x` with `x = 1e-4`, per-sample loss
`y * prediction` with `y = 1e-4`, so dL/dw is about 1e-8 per sample (float16
holds nothing below 6e-8). One batch holds a NaN and must be skipped.

Modes: `graph` (`disable_eager_execution()`, Keras' TF1 training loop),
`function` (the default `fit`) and `eager` (`run_eagerly=True`).

Prints one JSON line: `{"ok": true, "scales": [...], "weights": [...]}` with
the scale and `w` after each batch, or `{"ok": false, "error": ...}` with
the error `fit` raised. In graph mode it then fits the same model with TF
1.15's optimizer and manager (`tests/tf115_harness.py`), and adds its
scales and weights as `"tf115"`. (TF 1.15's Keras initialized only the
inner optimizer's variables, so `fit` failed on the manager's: the judge's
are initialized here by hand.)

Usage: python keras_fit.py MODE
"""

import importlib.util
import json
import os
import sys

# TF 2.16+ uses tf-keras (Keras 2) for tf.keras only when this is set before
# TensorFlow is imported; TF 2.15's own tf.keras is Keras 2, and fails to
# import under the variable unless tf-keras is installed.
if importlib.util.find_spec("tf_keras") is not None:
  os.environ["TF_USE_LEGACY_KERAS"] = "1"

import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

# The harness and the oracle live in tests/, this directory's parent.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# pylint: disable-next=g-import-not-at-top,wrong-import-position
import tf115_harness as harness

BATCH = 4
# Batch 3 (0-based 2) holds a NaN.
X = np.full([6 * BATCH, 1], 1e-4, np.float32)
X[2 * BATCH] = np.nan
Y = np.full([6 * BATCH, 1], 1e-4, np.float32)
LR = 1e4
INIT_SCALE, INCR_EVERY_N, DECR_EVERY_N = 2.0**15, 2, 1


def main(mode):
  if mode == "graph":
    tf.compat.v1.disable_eager_execution()
  try:
    scales, weights = fit(mode, harness.Library(harness.PACKAGE))
  except Exception as e:  # pylint: disable=broad-except
    print(json.dumps({"ok": False, "error": "{}: {}".format(
        type(e).__name__, e)}))
    return
  result = {"ok": True, "scales": scales, "weights": weights}
  if mode == "graph":
    result["tf115"] = dict(zip(("scales", "weights"), fit(
        mode, harness.Library(harness.ORACLE))))
  print(json.dumps(result))


def fit(mode, lib):
  """`fit` with `lib`'s optimizer: the scale and `w` after each batch."""
  keras = tf.keras
  manager = lib.ExponentialUpdateLossScaleManager(
      INIT_SCALE, INCR_EVERY_N, decr_every_n_nan_or_inf=DECR_EVERY_N,
      decr_ratio=0.5)
  opt = lib.LossScaleOptimizer(
      tf.compat.v1.train.GradientDescentOptimizer(LR), manager)
  if lib.is_oracle:
    tf.compat.v1.keras.backend.get_session().run(
        tf.compat.v1.variables_initializer(manager.variables()))
  layer = keras.layers.Dense(
      1, use_bias=False, kernel_initializer="ones",
      dtype=keras.mixed_precision.Policy("mixed_float16"))
  model = keras.Sequential([keras.Input([1]), layer])

  def loss(y_true, y_pred):
    # Keras casts `y_true` to the prediction's float16; 1e-4 is exact
    # enough there, and the product is taken in float32.
    return tf.cast(y_true, tf.float32) * tf.cast(y_pred, tf.float32)

  model.compile(optimizer=opt, loss=loss, run_eagerly=(mode == "eager"))
  scales, weights = [], []

  class Record(keras.callbacks.Callback):

    def on_train_batch_end(self, batch, logs=None):
      del batch, logs
      scales.append(float(keras.backend.get_value(manager.get_loss_scale())))
      weights.append(float(keras.backend.get_value(layer.kernel)[0, 0]))

  model.fit(X, Y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0,
            callbacks=[Record()])
  return scales, weights


if __name__ == "__main__":
  main(sys.argv[1])
