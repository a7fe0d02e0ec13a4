# Copyright 2026 The contrib_mixed_precision Authors. Apache-2.0.
"""Style 3: `from tensorflow.contrib import mixed_precision`."""
import os
import sys

import tensorflow.compat.v1 as tf
from tensorflow.contrib import mixed_precision

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import common  # pylint: disable=g-import-not-at-top

tf.disable_v2_behavior()


def main():
  x, y, loss = common.build()
  manager = mixed_precision.FixedLossScaleManager(128)
  opt = mixed_precision.LossScaleOptimizer(
      tf.train.GradientDescentOptimizer(common.LEARNING_RATE), manager)
  global_step = tf.train.get_or_create_global_step()
  train_op = opt.minimize(loss, global_step=global_step)
  # A fixed scale skips non-finite steps too (TF's own successor does not).
  common.train(x, y, loss, train_op, steps=10, bad_steps=(2,),
               loss_scale=manager.get_loss_scale())


if __name__ == "__main__": main()
