"""Trains the fixture twins; prints each step's numbers.

Usage: python train.py [sgd|adam] [--mixed-precision]
"""
import json
import sys

import numpy as np
import tensorflow as tf

import barlow_twins

OPTIMIZER = sys.argv[1]
MIXED_PRECISION = "--mixed-precision" in sys.argv

if MIXED_PRECISION:
    policy = tf.keras.mixed_precision.Policy('mixed_float16')
    tf.keras.mixed_precision.set_global_policy(policy)

INF, NAN = float("inf"), float("nan")
# Each step's pair of views; an Inf or NaN, or a value float16 cannot hold
# once scaled, makes the step's gradients non-finite.
VIEWS = ([[[1., 2.], [.5, 1.]], [[2., 1.], [1., 1.]], [[INF, 1.], [1., 1.]],
          [[1., 1.], [1., 3.]], [[NAN, 1.], [1., 1.]]]
         + [[[INF, 1.], [1., 1.]]] * 9 + [[[1., NAN], [1., 1.]]] * 8
         + [[[1., 2.], [.5, 1.]], [[.5, .5], [1., 2.]], [[1., 1.], [2., 1.]]])
GLOBAL_BATCH_SIZE = 1

mirrored_strategy = tf.distribute.MirroredStrategy()
with mirrored_strategy.scope():
    inputs = tf.keras.Input(shape=(2,))
    hidden = tf.keras.layers.Dense(
        2, kernel_initializer=tf.keras.initializers.Constant(0.25))(inputs)
    # The projection's output is float32, as mixed precision needs.
    outputs = tf.keras.layers.Activation("linear", dtype="float32")(hidden)
    model = tf.keras.Model(inputs, outputs)

    lr_scheduler = barlow_twins.WarmUpSchedule(base=0.125, warmup_steps=4)
    if OPTIMIZER == "adam":
        optimizer = tf.keras.optimizers.Adam(learning_rate=lr_scheduler, decay=1.5e-6)
    elif OPTIMIZER == "sgd":
        optimizer = tf.keras.optimizers.SGD(learning_rate=lr_scheduler, momentum=0.9)
    else:
        raise RuntimeError(f"Optimizer {OPTIMIZER} is not a valid option")

    if MIXED_PRECISION:
        optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)

global_step = 0
for views in VIEWS:
    image_pairs = tf.constant(np.array(views, np.float32)[:, None, :])
    loss = barlow_twins.distributed_train_step(
        mirrored_strategy, model, optimizer, image_pairs, 0.5,
        MIXED_PRECISION, GLOBAL_BATCH_SIZE)
    lr = lr_scheduler(global_step)
    weights = [float(v) for w in model.get_weights() for v in np.ravel(w)]
    print(json.dumps({
        "case": OPTIMIZER, "step": global_step,
        "scale": float(optimizer.loss_scale).hex(),
        "iterations": int(optimizer.iterations.numpy()),
        "lr": float(lr).hex(),
        "weights": [v.hex() for v in weights]}))
    global_step += 1
