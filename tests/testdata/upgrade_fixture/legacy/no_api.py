# Copyright 2026 The contrib_mixed_precision Authors. Apache-2.0.
"""Does not use tf.contrib at all: copied byte for byte."""
import tensorflow as tf   #   odd   spacing stays


def scale(x ,factor = 2.0) :
  return tf.multiply( x, factor )
