# Copyright 2026 The contrib_mixed_precision Authors. Apache-2.0.
"""The toy problem the fixture programs share. It does not use tf.contrib.

A one-feature linear regression, y = 3x + 1, trained with plain gradient
descent from zero. `train` runs the given train op for `steps` steps and
prints one JSON line with the final loss, weights and loss scale. On the
steps in `bad_steps` it feeds NaN inputs, so every gradient is non-finite.
"""

import json

import numpy as np
import tensorflow.compat.v1 as tf

X = np.array([[1.0], [2.0], [3.0], [4.0]], dtype=np.float32)
Y = 3.0 * X + 1.0
LEARNING_RATE = 0.05


def build():
  """Returns (x, y, loss) placeholders and the mean squared error."""
  x = tf.placeholder(tf.float32, [None, 1], name="x")
  y = tf.placeholder(tf.float32, [None, 1], name="y")
  w = tf.get_variable("w", [1, 1], initializer=tf.zeros_initializer())
  b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
  loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
  return x, y, loss


def train(x, y, loss, train_op, steps, bad_steps=(), loss_scale=None,
          weights=("w:0", "b:0"), extra=None):
  """Runs `train_op` `steps` times and prints the result as JSON.

  `weights` names the kernel and bias tensors; `extra` adds JSON fields.
  """
  with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(steps):
      xs = np.full_like(X, np.nan) if step in bad_steps else X
      sess.run(train_op, {x: xs, y: Y})
    values = {"loss": float(sess.run(loss, {x: X, y: Y}))}
    w, b = sess.run(list(weights))
    values["w"] = float(w[0][0])
    values["b"] = float(b[0])
    if loss_scale is not None:
      values["scale"] = float(sess.run(loss_scale))
  values.update(extra or {})
  print(json.dumps(values, sort_keys=True))
