# -*- coding: latin-1 -*-
# Copyright 2026 The contrib_mixed_precision Authors. Apache-2.0.
"""Declared latin-1, with latin-1 text: converted, encoding kept."""
import os
import sys

import tensorflow.compat.v1 as tf

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import common  # pylint: disable=g-import-not-at-top

tf.disable_v2_behavior()

AUTHOR = "Françoise Müller"  # latin-1 bytes: \xe7 and \xfc
x, y, loss = common.build()
manager = tf.contrib.mixed_precision.FixedLossScaleManager(2)
opt = tf.contrib.mixed_precision.LossScaleOptimizer(
    tf.train.GradientDescentOptimizer(common.LEARNING_RATE), manager)
common.train(x, y, loss, opt.minimize(loss), steps=5,
             loss_scale=manager.get_loss_scale(), extra={"author": AUTHOR})
