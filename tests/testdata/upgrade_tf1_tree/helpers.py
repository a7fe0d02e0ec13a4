# Copyright 2026 The contrib_mixed_precision Authors. Apache-2.0.
"""CRLF line endings; tf_upgrade_v2 rewrites this file too, and they stay."""
import numpy as np
import tensorflow as tf

X = np.array([[1.0], [2.0], [3.0], [4.0]], dtype=np.float32)
Y = 3.0 * X + 1.0


def feed(x, y, bad=False):
  """A feed dict; `bad` feeds NaN inputs, so every gradient is NaN."""
  assert tf.get_default_graph() is x.graph
  return {x: np.full_like(X, np.nan) if bad else X, y: Y}
