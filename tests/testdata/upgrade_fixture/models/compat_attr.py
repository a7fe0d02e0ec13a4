# Copyright 2026 The contrib_mixed_precision Authors. Apache-2.0.
"""Style 1 again, through `tf.compat.v1.contrib.mixed_precision`."""
import os
import sys

import tensorflow as tf

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import common  # pylint: disable=g-import-not-at-top

tf.compat.v1.disable_v2_behavior()
mp = tf.compat.v1.contrib.mixed_precision  # a module alias, TF1 style

x, y, loss = common.build()
manager = mp.FixedLossScaleManager(loss_scale=2.0 ** 15)
opt = tf.compat.v1.contrib.mixed_precision.LossScaleOptimizer(
    tf.compat.v1.train.GradientDescentOptimizer(common.LEARNING_RATE),
    manager)
train_op = opt.minimize(loss)
common.train(x, y, loss, train_op, steps=10,
             loss_scale=manager.get_loss_scale())
