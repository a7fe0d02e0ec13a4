# Copyright 2026 The contrib_mixed_precision Authors. Apache-2.0.
"""Style 5: the TF 1.15 module paths, in every import form."""
import os
import sys

import tensorflow.compat.v1 as tf
from tensorflow.contrib.mixed_precision.python import loss_scale_manager as lsm_lib
import tensorflow.contrib.mixed_precision.python.loss_scale_optimizer
from tensorflow.contrib.mixed_precision.python.loss_scale_optimizer import \
    LossScaleOptimizer

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import common  # pylint: disable=g-import-not-at-top

tf.disable_v2_behavior()

x, y, loss = common.build()
manager = lsm_lib.ExponentialUpdateLossScaleManager(4, 3)
opt = LossScaleOptimizer(
    tf.train.GradientDescentOptimizer(common.LEARNING_RATE), manager)
assert isinstance(
    opt, tensorflow.contrib.mixed_precision.python.loss_scale_optimizer
    .LossScaleOptimizer)
train_op = opt.minimize(loss)
common.train(x, y, loss, train_op, steps=8,
             loss_scale=manager.get_loss_scale())
