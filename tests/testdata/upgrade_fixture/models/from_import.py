# Copyright 2026 The contrib_mixed_precision Authors. Apache-2.0.
"""Style 2: `from tensorflow.contrib.mixed_precision import X, Y`."""
import os
import sys

import tensorflow.compat.v1 as tf
from tensorflow.contrib.mixed_precision import (  # the two we need
    ExponentialUpdateLossScaleManager,
    LossScaleOptimizer,   # wraps any tf.train optimizer
)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import common  # pylint: disable=g-import-not-at-top

tf.disable_v2_behavior()

x, y, loss = common.build()
# Positional, as in the wild: (init_loss_scale, incr_every_n_steps,
# decr_every_n_nan_or_inf, incr_ratio, decr_ratio).
manager = ExponentialUpdateLossScaleManager(16.0, 2, 1, 2, 0.5)
opt = LossScaleOptimizer(tf.train.GradientDescentOptimizer(
    common.LEARNING_RATE), manager)
grads_and_vars = opt.compute_gradients(loss)
train_op = opt.apply_gradients(grads_and_vars)
common.train(x, y, loss, train_op, steps=10, bad_steps=(4, 7),
             loss_scale=manager.get_loss_scale())
