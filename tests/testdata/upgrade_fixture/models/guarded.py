# Copyright 2026 The contrib_mixed_precision Authors. Apache-2.0.
"""Imports under guards that a rewrite cannot see through.

Each rewrite here is made, and each must be reported: the `try` block's
fallback no longer runs, the version check now takes its other branch, and
`make_tf1_manager` stops at `err_if_tf2()` before its rewritten line.
"""
import os
import sys

import tensorflow.compat.v1 as tf

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import common  # pylint: disable=g-import-not-at-top

try:
  from tensorflow.contrib.mixed_precision import LossScaleOptimizer
  FALLBACK = False
except ImportError:
  LossScaleOptimizer = None
  FALLBACK = True

if int(tf.__version__.split(".")[0]) < 2:
  FixedManager = tf.contrib.mixed_precision.FixedLossScaleManager
else:
  FixedManager = None

tf.disable_v2_behavior()


def err_if_tf2(msg):
  if not tf.__version__.startswith("1."):
    raise RuntimeError(msg)


def make_tf1_manager():
  err_if_tf2("make_tf1_manager needs TensorFlow 1")
  return tf.contrib.mixed_precision.FixedLossScaleManager(32)


def main():
  x, y, loss = common.build()
  if FixedManager is not None:
    manager = FixedManager(32)
  else:
    try:
      manager = make_tf1_manager()
    except RuntimeError:
      from contrib_mixed_precision import FixedLossScaleManager
      manager = FixedLossScaleManager(32)
  opt = LossScaleOptimizer(
      tf.train.GradientDescentOptimizer(common.LEARNING_RATE), manager)
  train_op = opt.minimize(loss)
  common.train(x, y, loss, train_op, steps=10, bad_steps=(3,),
               loss_scale=manager.get_loss_scale(),
               extra={"fallback": FALLBACK,
                      "version_branch": FixedManager is not None})


if __name__ == "__main__":
  main()
