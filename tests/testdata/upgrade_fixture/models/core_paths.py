# Copyright 2026 The contrib_mixed_precision Authors. Apache-2.0.
"""TF 1.15's real package name: `tensorflow_core.contrib.mixed_precision`.

TF 1.15 installed its code under `tensorflow_core`; code that imported the
module paths directly (as vendor model zoos do) names that package.
"""
import os
import sys

import tensorflow.compat.v1 as tf
from tensorflow_core.contrib.mixed_precision.python.loss_scale_manager import ExponentialUpdateLossScaleManager
from tensorflow_core.contrib.mixed_precision.python import (
    loss_scale_optimizer as lso_lib)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import common  # pylint: disable=g-import-not-at-top

tf.disable_v2_behavior()

x, y, loss = common.build()
manager = ExponentialUpdateLossScaleManager(2**20, 3, 2, 4, 0.25)
opt = lso_lib.LossScaleOptimizer(
    tf.train.GradientDescentOptimizer(common.LEARNING_RATE), manager)
train_op = opt.minimize(loss)
common.train(x, y, loss, train_op, steps=10, bad_steps=(1, 2, 8),
             loss_scale=manager.get_loss_scale())
