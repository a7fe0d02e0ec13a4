# Copyright 2026 The contrib_mixed_precision Authors. Apache-2.0.
"""`tf.contrib` itself as an object, in every way it was bound.

Only `mixed_precision` is used through these names, so after the rewrite
the file must import and run on TensorFlow 2: the bindings must go.
"""
import os
import sys

import tensorflow.compat.v1 as tf
from tensorflow import contrib
import tensorflow.contrib as tfc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import common  # pylint: disable=g-import-not-at-top

tf.disable_v2_behavior()
contrib_lib = tf.contrib


def main():
  x, y, loss = common.build()
  manager = contrib.mixed_precision.ExponentialUpdateLossScaleManager(
      8, 2, 1, 2, 0.5)
  mp = getattr(tf.contrib, "mixed_precision")
  base = tf.train.GradientDescentOptimizer(common.LEARNING_RATE)
  opt = tfc.mixed_precision.LossScaleOptimizer(base, manager)
  assert isinstance(opt, mp.LossScaleOptimizer)
  assert isinstance(manager, contrib_lib.mixed_precision.LossScaleManager)
  train_op = opt.minimize(loss)
  common.train(x, y, loss, train_op, steps=10, bad_steps=(6,),
               loss_scale=manager.get_loss_scale())


if __name__ == "__main__":
  main()
