# Copyright 2026 The contrib_mixed_precision Authors. Apache-2.0.
"""Uses other tf.contrib modules only: reported, never changed."""
import tensorflow as tf
from tensorflow.contrib import slim


def net(images):
  net = slim.conv2d(images, 32, [3, 3])
  return tf.contrib.layers.flatten(net)
