# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""TF 1.15 checkpoints into this package's graphs, and fp32 warm starts.

Commands:

* `write-tf115 --prefix P [--fp32-prefix Q]`: writes, without this package,
  a checkpoint laid out as TF 1.15's contrib `LossScaleOptimizer` around
  `AdamOptimizer` wrote it: `dense/kernel`, `dense/bias`, `global_step`
  (int64), the Adam slots
  `dense/kernel/Adam` and `dense/kernel/Adam_1` (and the bias's),
  `cond/beta1_power`, `cond/beta2_power`, `loss_scale` (float32),
  `good_steps` and `bad_steps` (int32). The values are in `TF115_STATE`.
  With `--fp32-prefix`, also writes the same model as a plain fp32 TF1 Adam
  run wrote it: no loss-scale keys, and Adam's powers as
  `beta1_power`/`beta2_power`.
* `restore --prefix P --out J`: builds the model with this package, restores
  `P` with a default `Saver`, and trains three steps (finite, NaN, NaN),
  logging the full state after each.
* `warm-start --prefix P --out J`: for each method (`default`, `saver`,
  `init_from_checkpoint`), in a fresh graph, restores an fp32 checkpoint by
  that method and trains a step.

Usage: python tf115_checkpoint.py COMMAND --prefix P [--out J]
"""

import argparse
import json
import sys

import numpy as np
import tensorflow as tf

# The state a TF 1.15 run left: 999 good steps (the next finite one grows the
# scale) and one pending bad step.
TF115_STATE = {
    "dense/kernel": np.array([[0.5], [-0.25], [1.0]], np.float32),
    "dense/bias": np.array([0.125], np.float32),
    "global_step": np.int64(1234),
    "dense/kernel/Adam": np.array([[0.01], [-0.02], [0.03]], np.float32),
    "dense/kernel/Adam_1": np.array([[1e-4], [2e-4], [3e-4]], np.float32),
    "dense/bias/Adam": np.array([0.005], np.float32),
    "dense/bias/Adam_1": np.array([5e-5], np.float32),
    "cond/beta1_power": np.float32(0.9**5),
    "cond/beta2_power": np.float32(0.999**5),
    "loss_scale": np.float32(1024.0),
    "good_steps": np.int32(999),
    "bad_steps": np.int32(1),
}
LEARNING_RATE = 0.01
# Deliberately different from the saved state: restored values must win.
MANAGER_ARGS = dict(init_loss_scale=2**15, incr_every_n_steps=1000,
                    decr_every_n_nan_or_inf=2, incr_ratio=2, decr_ratio=0.5)
X = np.array([[1.0, 2.0, -1.0], [0.5, -1.0, 2.0], [-2.0, 0.0, 1.0],
              [1.5, 1.0, 0.5]], np.float32)
Y = np.array([[1.0], [-1.0], [0.5], [2.0]], np.float32)


def write(prefix, state):
  """Saves `state` as plain variables with exactly these names and dtypes."""
  with tf.Graph().as_default():
    variables = {
        name: tf.compat.v1.Variable(value, name=name, use_resource=False)
        for name, value in state.items()}
    saver = tf.compat.v1.train.Saver(var_list=variables)
    with tf.compat.v1.Session() as sess:
      sess.run(tf.compat.v1.global_variables_initializer())
      saver.save(sess, prefix, write_meta_graph=False)


def fp32_state():
  state = {k: v for k, v in TF115_STATE.items()
           if k not in ("loss_scale", "good_steps", "bad_steps")}
  state["beta1_power"] = state.pop("cond/beta1_power")
  state["beta2_power"] = state.pop("cond/beta2_power")
  return state


def build():
  """The model, as TF 1.15 code using the contrib optimizer built it."""
  import contrib_mixed_precision as cmp  # pylint: disable=g-import-not-at-top
  x = tf.compat.v1.placeholder(tf.float32, [None, 3], name="x")
  y = tf.compat.v1.placeholder(tf.float32, [None, 1], name="y")
  global_step = tf.compat.v1.train.get_or_create_global_step()
  with tf.compat.v1.variable_scope("dense"):
    kernel = tf.compat.v1.get_variable("kernel", [3, 1])
    bias = tf.compat.v1.get_variable("bias", [1],
                                     initializer=tf.zeros_initializer())
  loss = tf.reduce_mean(tf.square(tf.matmul(x, kernel) + bias - y))
  manager = cmp.ExponentialUpdateLossScaleManager(**MANAGER_ARGS)
  opt = cmp.LossScaleOptimizer(
      tf.compat.v1.train.AdamOptimizer(LEARNING_RATE), manager)
  train_op = opt.apply_gradients(opt.compute_gradients(loss), global_step)
  return {"x": x, "y": y, "train_op": train_op, "manager": manager,
          "finite": opt.finite_grads}


def snapshot(sess):
  return {v.op.name: np.asarray(sess.run(v)).tolist()
          for v in tf.compat.v1.global_variables()}


def train(sess, g, poison_flags):
  steps = []
  for poisoned in poison_flags:
    x = X.copy()
    if poisoned:
      x[0, 0] = np.nan
    _, finite = sess.run([g["train_op"], g["finite"]],
                         {g["x"]: x, g["y"]: Y})
    steps.append({"finite": bool(finite), "state": snapshot(sess)})
  return steps


def restore(prefix):
  with tf.Graph().as_default():
    g = build()
    names = {v.op.name: v.dtype.base_dtype.name
             for v in tf.compat.v1.global_variables()}
    with tf.compat.v1.Session() as sess:
      # A default Saver: every global variable, by its own name.
      tf.compat.v1.train.Saver().restore(sess, prefix)
      restored = snapshot(sess)
      steps = train(sess, g, [False, True, True])
  return {"variables": names, "restored": restored, "steps": steps}


def warm_start(prefix, method):
  with tf.Graph().as_default():
    g = build()
    manager = g["manager"]
    result = {"method": method}
    with tf.compat.v1.Session() as sess:
      if method == "default":
        try:
          tf.compat.v1.train.Saver().restore(sess, prefix)
        except (tf.errors.NotFoundError, tf.errors.InvalidArgumentError) as e:
          result["error"] = "{}: {}".format(type(e).__name__, e.message)
          return result
      elif method == "saver":
        # Everything but the loss-scale state, which starts fresh.
        loss_scale_state = set(v.op.name for v in manager.variables())
        reader = tf.train.load_checkpoint(prefix)
        var_list = [v for v in tf.compat.v1.global_variables()
                    if v.op.name not in loss_scale_state and
                    reader.has_tensor(v.op.name)]
        sess.run(tf.compat.v1.global_variables_initializer())
        tf.compat.v1.train.Saver(var_list=var_list).restore(sess, prefix)
        result["restored_names"] = sorted(v.op.name for v in var_list)
      elif method == "init_from_checkpoint":
        # BERT's way: an assignment map of the trainable variables only;
        # it replaces their initializers.
        tf.compat.v1.train.init_from_checkpoint(
            prefix, {v.op.name: v.op.name
                     for v in tf.compat.v1.trainable_variables()})
        sess.run(tf.compat.v1.global_variables_initializer())
      else:
        raise ValueError("unknown --method {!r}".format(method))
      result["restored"] = snapshot(sess)
      result["steps"] = train(sess, g, [False])
  return result


def main(argv):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("command",
                      choices=["write-tf115", "restore", "warm-start"])
  parser.add_argument("--prefix", required=True)
  parser.add_argument("--fp32-prefix")
  parser.add_argument("--out")
  args = parser.parse_args(argv)
  tf.compat.v1.disable_v2_behavior()
  if args.command == "write-tf115":
    write(args.prefix, TF115_STATE)
    if args.fp32_prefix:
      write(args.fp32_prefix, fp32_state())
    return
  if args.command == "restore":
    result = restore(args.prefix)
  else:
    result = {method: warm_start(args.prefix, method)
              for method in ("default", "saver", "init_from_checkpoint")}
  with open(args.out, "w") as f:
    json.dump(result, f)


if __name__ == "__main__":
  main(sys.argv[1:])
