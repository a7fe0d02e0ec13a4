# Copyright 2026 The contrib_mixed_precision Authors. Apache-2.0.
"""A model built from `tf.compat.v1.layers`, with a contrib loss scale.

On TensorFlow 2.16 and later `tf.compat.v1.layers` needs tf-keras and
TF_USE_LEGACY_KERAS=1 set before TensorFlow is imported; the report flags
this file for it.
"""
import os
import sys

import tensorflow.compat.v1 as tf

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import common  # pylint: disable=g-import-not-at-top

tf.disable_v2_behavior()

x = tf.placeholder(tf.float32, [None, 1], name="x")
y = tf.placeholder(tf.float32, [None, 1], name="y")
# A zero-initialised dense layer is the same model as common.build's.
prediction = tf.layers.dense(x, 1, kernel_initializer=tf.zeros_initializer(),
                             name="linear")
loss = tf.reduce_mean(tf.square(prediction - y))
manager = tf.contrib.mixed_precision.ExponentialUpdateLossScaleManager(
    2**8, 2, 2, 2, 0.5)
opt = tf.contrib.mixed_precision.LossScaleOptimizer(
    tf.train.GradientDescentOptimizer(common.LEARNING_RATE), manager)
train_op = opt.minimize(loss)
common.train(x, y, loss, train_op, steps=10, bad_steps=(2, 4),
             loss_scale=manager.get_loss_scale(),
             weights=("linear/kernel:0", "linear/bias:0"))
