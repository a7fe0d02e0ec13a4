# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""TF 2.0-2.8 mixed-precision programs, and TF 2.0's own policy as judge.

One program per row of issue 42's table, written as TF 2.0 to 2.8 users
wrote them (`TREE`), each printing the loss scale, the step count and the
weights after every step of `CASES`; `REFERENCE` runs the same cases with
TF 2.0's classes, unchanged in TF today:
`tf.compat.v1.mixed_precision.DynamicLossScale`/`FixedLossScale` driven by
`tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer` in a
Session. Shared by tests/upgrade_tf2x_test.py (converted by the command)
and tests/alias_test.py (unconverted, behind `install_alias()`).
"""

import json

import numpy as np

_INF, _NAN = float("inf"), float("nan")
# Steps: the input `x` of `loss = sum(w * x)`; an Inf or NaN makes that
# step's gradients non-finite.
_MIXED = [[1, 2], [.5, 1], [_INF, 1], [1, 1], [_NAN, 1], [_NAN, .5], [2, 1],
          [1, 3], [1, 1], [_INF, _INF], [1, 1], [1, 1]]
_TO_FLOOR = [[1, 1], [_INF, 1], [_NAN, 1], [_INF, 1], [_NAN, _NAN],
             [1, .5], [1, 1], [1, 2], [_INF, 1], [1, 1]]
CASES = [
    {"name": "multiplier_4", "ls": ["dynamic", 8.0, 2, 4.0], "xs": _MIXED},
    {"name": "to_floor", "ls": ["dynamic", 4.0, 3, 2.0], "xs": _TO_FLOOR},
    {"name": "fixed", "ls": ["fixed", 128.0], "xs": _MIXED},
]
LEARNING_RATE = 0.25

# TF 2.0's policy, run by TF 2.0's own classes (unchanged since).
REFERENCE = '''
import json, sys
import tensorflow as tf
for case in json.loads(sys.argv[1]):
  with tf.Graph().as_default():
    spec = case["ls"]
    if spec[0] == "dynamic":
      ls = tf.compat.v1.mixed_precision.DynamicLossScale(
          initial_loss_scale=spec[1], increment_period=spec[2],
          multiplier=spec[3])
    else:
      ls = tf.compat.v1.mixed_precision.FixedLossScale(spec[1])
    x = tf.compat.v1.placeholder(tf.float32, [2])
    w = tf.compat.v1.Variable([1.0, -2.0])
    gs = tf.compat.v1.train.get_or_create_global_step()
    opt = tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(
        tf.compat.v1.train.GradientDescentOptimizer(%r), ls)
    train = opt.minimize(tf.reduce_sum(w * x), global_step=gs)
    trace = []
    with tf.compat.v1.Session() as sess:
      sess.run(tf.compat.v1.global_variables_initializer())
      for xs in case["xs"]:
        sess.run(train, {x: xs})
        s, g, wv = sess.run([ls(), gs, w])
        trace.append([float(s), int(g)] + [float(v) for v in wv])
  print(json.dumps({"case": case["name"], "trace": trace}))
''' % LEARNING_RATE

# Row 1: `tf.train.experimental` (and `tf.compat.v2.train.experimental`)
# loss scales, driven by hand in a `tf.function` custom loop.
_ROW1 = '''
import json, sys
import tensorflow as tf


def make_loss_scale(spec):
  if spec[0] == "dynamic":
    return tf.train.experimental.DynamicLossScale(
        initial_loss_scale=spec[1], increment_period=spec[2],
        multiplier=spec[3])
  return tf.compat.v2.train.experimental.FixedLossScale(spec[1])


def run(case):
  loss_scale = make_loss_scale(case["ls"])
  assert isinstance(loss_scale, tf.train.experimental.LossScale)
  w = tf.Variable([1.0, -2.0])
  steps = tf.Variable(0, dtype=tf.int64)

  @tf.function
  def train_step(x):
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(w * x) * loss_scale()
    (g,) = tape.gradient(loss, [w])
    g = g * (1. / loss_scale())
    _, should_apply = loss_scale.update([g])
    if should_apply:
      w.assign_sub(LR * g)
      steps.assign_add(1)

  trace = []
  for xs in case["xs"]:
    train_step(tf.constant(xs, tf.float32))
    trace.append([float(loss_scale()), int(steps)] +
                 [float(v) for v in w.numpy()])
  return trace


for case in json.loads(sys.argv[1]):
  print(json.dumps({"case": case["name"], "trace": run(case)}))
'''

# Row 2: `tf.mixed_precision.experimental` (TF 2.1-2.8), through the module
# and through an aliased import, driven by hand in eager mode.
_ROW2 = '''
import json, sys
import tensorflow as tf
from tensorflow.mixed_precision import experimental as mpe


def run(case):
  spec = case["ls"]
  if spec[0] == "dynamic":
    loss_scale = tf.mixed_precision.experimental.DynamicLossScale(
        spec[1], spec[2], spec[3])
  else:
    loss_scale = mpe.FixedLossScale(spec[1])
  assert isinstance(loss_scale, mpe.LossScale)
  w = tf.Variable([1.0, -2.0])
  steps = 0
  trace = []
  for xs in case["xs"]:
    x = tf.constant(xs, tf.float32)
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(w * x) * loss_scale()
    (g,) = tape.gradient(loss, [w])
    g = g * (1. / loss_scale())
    _, should_apply = loss_scale.update([g])
    if should_apply:
      w.assign_sub(LR * g)
      steps += 1
    trace.append([float(loss_scale()), steps] +
                 [float(v) for v in w.numpy()])
  return trace


for case in json.loads(sys.argv[1]):
  print(json.dumps({"case": case["name"], "trace": run(case)}))
'''

# Row 3: the graph rewrite with a `tf.compat.v1` optimizer, in a Session,
# as NVIDIA-style BERT and Horovod scripts wrote it.
_ROW3 = '''
import json, sys
import tensorflow as tf


def run(case):
  spec = case["ls"]
  with tf.Graph().as_default():
    if spec[0] == "dynamic":
      loss_scale = tf.train.experimental.DynamicLossScale(
          initial_loss_scale=spec[1], increment_period=spec[2],
          multiplier=spec[3])
    else:
      loss_scale = tf.train.experimental.FixedLossScale(spec[1])
    x = tf.compat.v1.placeholder(tf.float32, [2])
    w = tf.compat.v1.Variable([1.0, -2.0])
    global_step = tf.compat.v1.train.get_or_create_global_step()
    opt = tf.compat.v1.train.GradientDescentOptimizer(LR)
    opt = tf.train.experimental.enable_mixed_precision_graph_rewrite(
        opt, loss_scale=loss_scale)
    train_op = opt.minimize(tf.reduce_sum(w * x), global_step=global_step)
    trace = []
    with tf.compat.v1.Session() as sess:
      sess.run(tf.compat.v1.global_variables_initializer())
      for xs in case["xs"]:
        sess.run(train_op, {x: xs})
        s, g, wv = sess.run([loss_scale(), global_step, w])
        trace.append([float(s), int(g)] + [float(v) for v in wv])
    tf.train.experimental.disable_mixed_precision_graph_rewrite()
  return trace


for case in json.loads(sys.argv[1]):
  print(json.dumps({"case": case["name"], "trace": run(case)}))
'''

# Rows 3 (a Keras optimizer), 4 and 5: Keras' experimental
# LossScaleOptimizer, the graph rewrite of a Keras optimizer, and today's
# class given TF 2.x's `loss_scale`, in a TF 2.x custom loop
# (`get_scaled_loss`, `get_unscaled_gradients`). WRAP is the row's spelling.
_KERAS_LOOP = '''
import json, sys
import tensorflow as tf
from tensorflow.keras.mixed_precision import experimental as mixed_precision


def make_loss_scale(spec):
  if spec[0] == "dynamic":
    return tf.mixed_precision.experimental.DynamicLossScale(
        initial_loss_scale=spec[1], increment_period=spec[2],
        multiplier=spec[3])
  return tf.train.experimental.FixedLossScale(spec[1])


def run(case):
  loss_scale = make_loss_scale(case["ls"])
  layer = tf.keras.layers.Dense(
      1, use_bias=False,
      kernel_initializer=tf.keras.initializers.Constant([[1.0], [-2.0]]))
  layer.build((1, 2))
  w = layer.kernel
  sgd = tf.keras.optimizers.SGD(LR)
  opt = WRAP
  trace = []
  for xs in case["xs"]:
    x = tf.constant(xs, tf.float32)
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(w[:, 0] * x)
      scaled = opt.get_scaled_loss(loss)
    grads = opt.get_unscaled_gradients(tape.gradient(scaled, [w]))
    opt.apply_gradients(zip(grads, [w]))
    trace.append([float(loss_scale()), int(opt.iterations)] +
                 [float(v) for v in w.numpy()[:, 0]])
  return trace


for case in json.loads(sys.argv[1]):
  print(json.dumps({"case": case["name"], "trace": run(case)}))
'''
_ROW3_KERAS = _KERAS_LOOP.replace(
    "WRAP", "tf.train.experimental.enable_mixed_precision_graph_rewrite("
    "tf.keras.optimizers.SGD(LR), loss_scale)")
_ROW4_LSO = _KERAS_LOOP.replace(
    "WRAP", "mixed_precision.LossScaleOptimizer(sgd, loss_scale=loss_scale)")
_ROW5_LSO = _KERAS_LOOP.replace(
    "WRAP", "tf.keras.mixed_precision.LossScaleOptimizer(sgd, "
    "loss_scale=loss_scale)")

# Row 4's policy functions, and row 5's today's Policy given `loss_scale`.
_ROW4_POLICY = '''
import json
import tensorflow as tf
from tensorflow.keras.mixed_precision import experimental as mixed_precision
from tensorflow.keras.mixed_precision.experimental import get_layer_policy

policy = mixed_precision.Policy(
    "mixed_float16",
    loss_scale=tf.train.experimental.DynamicLossScale(
        initial_loss_scale=8., increment_period=2, multiplier=4.))
mixed_precision.set_policy(policy)
layer = tf.keras.layers.Dense(2)
y = layer(tf.ones([1, 3]))
plain = tf.keras.mixed_precision.Policy("float32", loss_scale=None)
print(json.dumps({
    "global": tf.keras.mixed_precision.experimental.global_policy().name,
    "compute": mixed_precision.get_layer_policy(layer).compute_dtype,
    "variable": get_layer_policy(layer).variable_dtype,
    "output": y.dtype.name,
    "kernel": tf.as_dtype(layer.kernel.dtype).name,
    "plain": plain.name,
}))
'''

# Row 6: NVIDIA's variable, which stock TensorFlow ignores.
_ROW6 = '''
import os
os.environ["TF_ENABLE_AUTO_MIXED_PRECISION"] = "1"
import tensorflow as tf
print(tf.reduce_sum(tf.ones([2])).dtype.name)
'''

TREE = {
    "row1_train_experimental.py": _ROW1.replace("LR", repr(LEARNING_RATE)),
    "row2_mixed_precision_experimental.py": _ROW2.replace(
        "LR", repr(LEARNING_RATE)),
    "row3_graph_rewrite_v1.py": _ROW3.replace("LR", repr(LEARNING_RATE)),
    "row3_graph_rewrite_keras.py": _ROW3_KERAS.replace(
        "LR", repr(LEARNING_RATE)),
    "row4_keras_lso.py": _ROW4_LSO.replace("LR", repr(LEARNING_RATE)),
    "row4_keras_policy.py": _ROW4_POLICY,
    "row5_today_lso.py": _ROW5_LSO.replace("LR", repr(LEARNING_RATE)),
    "row6_env.py": _ROW6,
}


def traces(proc) -> dict:
  """`{case: array of rows}` from a program's stdout."""
  if proc.returncode != 0:
    raise AssertionError("The program failed (exit {}):\n{}\n{}".format(
        proc.returncode, proc.stdout, proc.stderr[-6000:]))
  found = {}
  for line in proc.stdout.splitlines():
    if line.startswith("{"):
      record = json.loads(line)
      found[record["case"]] = np.array(record["trace"], dtype=np.float64)
  return found
