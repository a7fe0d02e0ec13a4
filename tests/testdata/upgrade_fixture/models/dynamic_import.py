# Copyright 2026 The contrib_mixed_precision Authors. Apache-2.0.
"""The API reached through dynamic imports with literal module names.

Plugin-style code loads modules by name: `importlib.import_module` with a
module path, `__import__` with and without a `fromlist`, and attributes
read off `__import__("tensorflow")`. Each must reach this package after the
rewrite, and the program must run on TensorFlow 2.
"""
import importlib
from importlib import import_module
import os
import sys

import tensorflow.compat.v1 as tf

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import common  # pylint: disable=g-import-not-at-top

tf.disable_v2_behavior()


def main():
  x, y, loss = common.build()
  managers = importlib.import_module(
      "tensorflow.contrib.mixed_precision.python.loss_scale_manager")
  manager = managers.ExponentialUpdateLossScaleManager(
      init_loss_scale=2**12, incr_every_n_steps=3, decr_every_n_nan_or_inf=1,
      decr_ratio=0.25)
  mp = import_module('tensorflow.contrib.mixed_precision')
  lso = __import__("tensorflow.contrib.mixed_precision.python."
                   "loss_scale_optimizer", fromlist=["LossScaleOptimizer"])
  root = __import__("tensorflow.contrib.mixed_precision")
  base = tf.train.GradientDescentOptimizer(common.LEARNING_RATE)
  opt = __import__("tensorflow").contrib.mixed_precision.LossScaleOptimizer(
      base, manager)
  assert isinstance(opt, mp.LossScaleOptimizer)
  assert isinstance(opt, lso.LossScaleOptimizer)
  assert isinstance(manager, root.contrib.mixed_precision.LossScaleManager)
  train_op = opt.minimize(loss)
  common.train(x, y, loss, train_op, steps=9, bad_steps=(2, 3),
               loss_scale=manager.get_loss_scale())


if __name__ == "__main__":
  main()
