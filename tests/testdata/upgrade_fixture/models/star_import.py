# Copyright 2026 The contrib_mixed_precision Authors. Apache-2.0.
"""`from tensorflow.contrib.mixed_precision import *`.

TF 1.15's module exported exactly four names; the star import must bring in
those and nothing else of the package that replaces it.
"""
import os
import sys

import tensorflow.compat.v1 as tf
from tensorflow.contrib.mixed_precision import *  # pylint: disable=wildcard-import

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import common  # pylint: disable=g-import-not-at-top

tf.disable_v2_behavior()

x, y, loss = common.build()
manager = ExponentialUpdateLossScaleManager(1, 2, 2, 2, 0.5)
assert isinstance(manager, LossScaleManager)
assert not isinstance(manager, FixedLossScaleManager)
opt = LossScaleOptimizer(
    tf.train.GradientDescentOptimizer(common.LEARNING_RATE), manager)
train_op = opt.minimize(loss)
bound = sorted(n for n in ("GraphKeys", "LossScaleHook", "install_alias",
                           "ExponentialUpdateLossScale", "__version__")
               if n in globals())
common.train(x, y, loss, train_op, steps=6, loss_scale=manager.get_loss_scale(),
             extra={"extra_names": bound})
