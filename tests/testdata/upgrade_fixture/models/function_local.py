# Copyright 2026 The contrib_mixed_precision Authors. Apache-2.0.
"""A name imported inside one function serves only that function.

`contrib_mixed_precision` is bound in `make_manager` alone, as some large
model libraries do; `make_optimizer` reaches the API through `tf.contrib`,
so after the rewrite it needs an import that it can see.
"""
import os
import sys

import tensorflow.compat.v1 as tf

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import common  # pylint: disable=g-import-not-at-top

tf.disable_v2_behavior()


def make_manager():
  from tensorflow.contrib import mixed_precision as contrib_mixed_precision
  return contrib_mixed_precision.ExponentialUpdateLossScaleManager(
      init_loss_scale=64, incr_every_n_steps=2, decr_every_n_nan_or_inf=1,
      decr_ratio=0.5)


def make_optimizer(manager):
  return tf.contrib.mixed_precision.LossScaleOptimizer(
      tf.train.GradientDescentOptimizer(common.LEARNING_RATE), manager)


def main():
  x, y, loss = common.build()
  manager = make_manager()
  train_op = make_optimizer(manager).minimize(loss)
  common.train(x, y, loss, train_op, steps=9, bad_steps=(5,),
               loss_scale=manager.get_loss_scale())


if __name__ == "__main__":
  main()
