# Copyright 2026 The contrib_mixed_precision Authors. Apache-2.0.
"""CRLF line endings, as Windows checkouts have: they must survive."""
import os
import sys

import tensorflow.compat.v1 as tf

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import common  # pylint: disable=g-import-not-at-top

tf.disable_v2_behavior()

x, y, loss = common.build()
manager = tf.contrib.mixed_precision.FixedLossScaleManager(4096)
opt = tf.contrib.mixed_precision.LossScaleOptimizer(
    tf.train.GradientDescentOptimizer(common.LEARNING_RATE), manager)
common.train(x, y, loss, opt.minimize(loss), steps=7, bad_steps=(0,),
             loss_scale=manager.get_loss_scale())
