# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""A model with `KerasLossScaleOptimizer` saved as `.keras`, then loaded.

`save` and `load` run in separate processes, as a training script and a
resuming one would: `load` must find the class without building an
optimizer first. Each step applies a hand-made gradient, Inf or NaN
where the sequence says, so the scale and its counter move.

Prints one JSON line: after `save`, the steps, then the scale, the loss
scale's variables and `iterations`; after `load`, the same as loaded, the
further steps and the scale after each.

Usage: python keras_lso_keras_file.py save|load PATH KERAS
  KERAS: tf_keras_default (`tf.keras`) or tf_keras_package (`tf_keras`).
"""

import json
import sys

import tensorflow as tf

import contrib_mixed_precision as mp

SAVED_STEPS = [1.0, float("inf"), 1.0, 1.0, 1.0, float("nan"), 1.0]
RESUMED_STEPS = [1.0, 1.0, float("inf"), 1.0, 1.0, 1.0]


def keras_package(name):
  if name == "tf_keras_package":
    import tf_keras  # pylint: disable=g-import-not-at-top
    return tf_keras
  return tf.keras


def state(opt):
  return {"scale": float(opt.loss_scale),
          "loss_scale_variables": [
              v.numpy().item() for v in opt.loss_scale_manager.variables()],
          "iterations": int(opt.iterations.numpy())}


def step(model, g):
  model.optimizer.apply_gradients(
      [(tf.fill([2, 1], g), model.trainable_variables[0])])


def main(mode, path, keras_name):
  keras = keras_package(keras_name)
  if mode == "save":
    inputs = keras.Input((2,))
    outputs = keras.layers.Dense(1, use_bias=False,
                                 kernel_initializer="ones")(inputs)
    model = keras.Model(inputs, outputs)
    model.compile(loss="mse", optimizer=mp.KerasLossScaleOptimizer(
        keras.optimizers.SGD(0.1),
        tf.compat.v1.mixed_precision.DynamicLossScale(2.**10, 3, 4.)))
    for g in SAVED_STEPS:
      step(model, g)
    model.save(path)
    result = state(model.optimizer)
    result["steps"] = SAVED_STEPS
    print(json.dumps(result))
    return
  model = keras.models.load_model(path)
  result = state(model.optimizer)
  result["class"] = type(model.optimizer).__name__
  result["steps"] = RESUMED_STEPS
  result["resumed"] = []
  for g in RESUMED_STEPS:
    step(model, g)
    result["resumed"].append(float(model.optimizer.loss_scale))
  print(json.dumps(result))


if __name__ == "__main__":
  main(*sys.argv[1:])
