#!/usr/bin/env python
# Copyright 2026 The contrib_mixed_precision Authors. Apache-2.0.
"""Style 1: `tf.contrib.mixed_precision.X`, after tf_upgrade_v2.

tf_upgrade_v2 turned `import tensorflow as tf` into the compat.v1 import and
left every contrib use alone.
"""
from __future__ import print_function

import tensorflow.compat.v1 as tf  # tf_upgrade_v2 wrote this line

import common

tf.disable_v2_behavior()


def summarize(t):
  # Never called here: tf.contrib.layers is another contrib module, which
  # contrib-mp-upgrade must leave alone and report.
  return tf.contrib.layers.summarize_tensor(t)


def main():
  x, y, loss = common.build()
  manager = tf.contrib.mixed_precision.ExponentialUpdateLossScaleManager(
      init_loss_scale=2 ** 10,   # odd  spacing on purpose
      incr_every_n_steps=3)
  opt = tf.contrib.mixed_precision.LossScaleOptimizer(
      tf.train.GradientDescentOptimizer(common.LEARNING_RATE),
      manager)  # positional, as NVIDIA writes it
  train_op = opt.minimize(loss)
  common.train(x, y, loss, train_op, steps=10,
               loss_scale=manager.get_loss_scale())


if __name__ == "__main__":
  main()
