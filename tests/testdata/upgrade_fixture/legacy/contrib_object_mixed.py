# Copyright 2026 The contrib_mixed_precision Authors. Apache-2.0.
"""`tf.contrib` as an object, used for `mixed_precision` and for `layers`.

The `mixed_precision` use is rewritten; the binding must stay for
`contrib.layers`, and the report must say which lines keep it alive.
"""
import tensorflow as tf
from tensorflow import contrib


def build(images, manager):
  net = contrib.layers.flatten(images)
  opt = contrib.mixed_precision.LossScaleOptimizer(
      tf.train.AdamOptimizer(), manager)
  return net, opt
