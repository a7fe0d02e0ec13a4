# Copyright 2026 The contrib_mixed_precision Authors. Apache-2.0.
"""Plain TF 1.x code: it needs both converters before it runs on TF 2.

`tf.placeholder`, `tf.trainable_variables` and `tf.Session` are for
tf_upgrade_v2; `tf.contrib.mixed_precision` is for contrib-mp-upgrade; and
`tf.layers` needs tf-keras on TensorFlow 2.16 and later.
"""
import json

import numpy as np
import tensorflow as tf

from helpers import feed

LEARNING_RATE = 0.05


def main():
  with tf.Graph().as_default():
    x = tf.placeholder(tf.float32, [None, 1], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    prediction = tf.layers.dense(
        x, 1, kernel_initializer=tf.zeros_initializer(), name="linear")
    loss = tf.reduce_mean(tf.square(prediction - y))
    manager = tf.contrib.mixed_precision.ExponentialUpdateLossScaleManager(
        128, 2, 2, 2, 0.5)
    opt = tf.contrib.mixed_precision.LossScaleOptimizer(
        tf.train.GradientDescentOptimizer(LEARNING_RATE), manager)
    train_op = opt.minimize(loss, var_list=tf.trainable_variables())
    with tf.Session() as sess:
      sess.run(tf.global_variables_initializer())
      for step in range(8):
        sess.run(train_op, feed(x, y, bad=step == 3))
      w, b = sess.run(tf.trainable_variables())  # [kernel, bias]
      print(json.dumps({
          "loss": float(sess.run(loss, feed(x, y))),
          "w": float(np.ravel(w)[0]), "b": float(np.ravel(b)[0]),
          "scale": float(sess.run(manager.get_loss_scale()))}))


if __name__ == "__main__":
  main()
