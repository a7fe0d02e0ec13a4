# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""A TF1 `tf.compat.v1.Session` training program shaped like NVIDIA's BERT.

What it copies from NVIDIA DeepLearningExamples' BERT (TF1):
- `disable_v2_behavior()`, so variables are ref variables;
- an fp32-master custom getter: variables are stored in float32 and cast to
  float16 for the forward pass, so gradients reach the variables in float16;
- `ExponentialUpdateLossScaleManager(init_loss_scale=2**32,
  incr_every_n_steps=1000, decr_every_n_nan_or_inf=2, decr_ratio=0.5)`;
- `compute_gradients`, `clip_by_global_norm` (with NVIDIA's `use_norm` cond),
  `apply_gradients` into an inner optimizer whose `apply_gradients` requires
  `global_step` positionally and never increments it;
- the program increments `global_step` itself, under its own
  `tf.cond(all_are_finite, ...)`, as a `tf.identity` named `step_update`;
- a `SessionRunHook` that fetches `'step_update:0'`, `'loss_scale:0'` and
  `'total_loss:0'` by name, as NVIDIA's `_LogSessionRunHook` does.

The hook is driven over a plain `tf.compat.v1.Session` by the same protocol
`MonitoredSession` uses (begin, after_create_session, before_run,
after_run). Data is deterministic by step; `--poison-steps` feed a NaN.

Writes JSON to `--out`: one record per step (the hook's fetches, the finite
flag, the program's own `all_are_finite`, the loss-scale state and a weight
checksum after the step) and the final state. Then the same program, built
with TF 1.15's optimizer and manager (`tests/tf115_harness.py`) in a graph
of its own, takes the same steps: `tf115_states` and `states` hold each
side's every weight (as hex bytes), scale, counters and `global_step` after
each step, for the test to compare.

Usage: python session_bert_like.py --out FILE [--steps N] [--poison-steps 50]
"""

import argparse
import json
import os
import sys

import numpy as np
import tensorflow as tf

# The harness and the oracle live in tests/, this directory's parent.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tf115_harness as harness  # pylint: disable=wrong-import-position

_IN, _HIDDEN, _BATCH = 8, 16, 32


def float32_variable_storage_getter(getter, name, shape=None, dtype=None,
                                    initializer=None, regularizer=None,
                                    trainable=True, *args, **kwargs):
  """NVIDIA's getter: float32 storage, cast to the requested compute dtype."""
  storage_dtype = tf.float32 if trainable else dtype
  variable = getter(name, shape, dtype=storage_dtype, initializer=initializer,
                    regularizer=regularizer, trainable=trainable, *args,  # noqa: B026
                    **kwargs)
  if trainable and dtype != tf.float32:
    variable = tf.cast(variable, dtype)
  return variable


class NoStepAdam(tf.compat.v1.train.AdamOptimizer):
  """Like NVIDIA's AdamWeightDecayOptimizer: `global_step` is required."""

  def apply_gradients(self, grads_and_vars, global_step, name=None):
    del global_step  # The program increments it itself.
    return super().apply_gradients(grads_and_vars, None, name)


def batch(step, poisoned):
  rng = np.random.RandomState(step)
  x = rng.uniform(-1.0, 1.0, size=(_BATCH, _IN)).astype(np.float32)
  y = (np.sin(x[:, :1] * 2.0) + x[:, 1:2] * x[:, 2:3]).astype(np.float32)
  if poisoned:
    x[0, 0] = np.nan
  return x, y


class LogHook(tf.compat.v1.train.SessionRunHook):
  """Fetches tensors by name, as NVIDIA's `_LogSessionRunHook` does."""

  def __init__(self):
    self.records = []

  def before_run(self, run_context):
    return tf.compat.v1.train.SessionRunArgs(
        fetches=["step_update:0", "loss_scale:0", "total_loss:0"])

  def after_run(self, run_context, run_values):
    step_update, loss_scale, total_loss = run_values.results
    self.records.append({"step_update": int(step_update),
                         "hook_loss_scale": float(loss_scale),
                         "total_loss": float(total_loss)})


def build(lib):
  """The model and its train op, with `lib`'s optimizer and manager."""
  x = tf.compat.v1.placeholder(tf.float32, [None, _IN], name="x")
  y = tf.compat.v1.placeholder(tf.float32, [None, 1], name="y")
  global_step = tf.compat.v1.train.get_or_create_global_step()
  with tf.compat.v1.variable_scope(
      "bert", custom_getter=float32_variable_storage_getter):
    h = tf.cast(x, tf.float16)
    w1 = tf.compat.v1.get_variable(
        "w1", [_IN, _HIDDEN], tf.float16,
        initializer=tf.compat.v1.glorot_uniform_initializer(seed=1))
    b1 = tf.compat.v1.get_variable("b1", [_HIDDEN], tf.float16,
                                   initializer=tf.zeros_initializer())
    w2 = tf.compat.v1.get_variable(
        "w2", [_HIDDEN, 1], tf.float16,
        initializer=tf.compat.v1.glorot_uniform_initializer(seed=2))
    h = tf.nn.tanh(tf.matmul(h, w1) + b1)
    logits = tf.cast(tf.matmul(h, w2), tf.float32)
  loss = tf.reduce_mean(tf.square(logits - y))
  loss = tf.identity(loss, name="total_loss")

  manager = lib.ExponentialUpdateLossScaleManager(
      init_loss_scale=2**32, incr_every_n_steps=1000,
      decr_every_n_nan_or_inf=2, decr_ratio=0.5)
  optimizer = lib.LossScaleOptimizer(NoStepAdam(learning_rate=1e-2), manager)
  tvars = tf.compat.v1.trainable_variables()
  grads_and_vars = optimizer.compute_gradients(loss, tvars)
  grads = [g for g, _ in grads_and_vars]
  all_are_finite = tf.reduce_all(
      [tf.reduce_all(tf.math.is_finite(g)) for g in grads])
  # NVIDIA clips with a norm that is finite even on overflow steps.
  clipped, _ = tf.clip_by_global_norm(
      grads, clip_norm=1.0,
      use_norm=tf.cond(all_are_finite, lambda: tf.linalg.global_norm(grads),
                       lambda: tf.constant(1.0)))
  train_op = optimizer.apply_gradients(list(zip(clipped, tvars)),
                                       global_step=global_step)
  new_global_step = tf.cond(all_are_finite, lambda: global_step + 1,
                            lambda: global_step)
  new_global_step = tf.identity(new_global_step, name="step_update")
  train_op = tf.group(train_op, [global_step.assign(new_global_step)])
  return {
      "x": x, "y": y, "train_op": train_op, "all_are_finite": all_are_finite,
      "finite_grads": getattr(optimizer, "finite_grads", None),
      "manager": manager,
      "global_step": global_step, "tvars": tvars,
  }


def main(argv):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--out", required=True)
  parser.add_argument("--steps", type=int, default=70)
  parser.add_argument("--poison-steps", default="",
                      help="comma-separated 0-based steps fed a NaN")
  args = parser.parse_args(argv)
  poison = set(int(s) for s in args.poison_steps.split(",") if s)

  tf.compat.v1.disable_v2_behavior()
  g = build(harness.Library(harness.PACKAGE))
  scale_var, good_var, bad_var = g["manager"].variables()
  info = {
      "variable_kinds": [type(v).__name__ for v in g["manager"].variables()],
      "variable_names": [v.name for v in g["manager"].variables()],
      "master_dtypes": [v.dtype.base_dtype.name for v in g["tvars"]],
  }
  hook = LogHook()
  hook.begin()
  config = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=1,
                                    inter_op_parallelism_threads=2)
  records, states = [], []
  with tf.compat.v1.Session(config=config) as sess:
    sess.run(tf.compat.v1.global_variables_initializer())
    hook.after_create_session(sess, None)
    for step in range(args.steps):
      x, y = batch(step, step in poison)
      fetches = {"train": g["train_op"], "finite": g["finite_grads"],
                 "all_are_finite": g["all_are_finite"]}
      feed = {g["x"]: x, g["y"]: y}
      # The MonitoredSession protocol, over a plain Session.
      context = tf.compat.v1.train.SessionRunContext(
          tf.compat.v1.train.SessionRunArgs(fetches, feed), sess)
      hook_args = hook.before_run(context)
      results, hook_results = sess.run([fetches, hook_args.fetches],
                                       feed_dict=feed)
      hook.after_run(context, tf.compat.v1.train.SessionRunValues(
          results=hook_results, options=None, run_metadata=None))
      scale, good, bad, gs, weights = sess.run(
          [scale_var, good_var, bad_var, g["global_step"], g["tvars"]])
      record = dict(hook.records[-1])
      record.update({
          "step": step, "poisoned": step in poison,
          "finite": bool(results["finite"]),
          "all_are_finite": bool(results["all_are_finite"]),
          "loss_scale": float(scale), "good_steps": int(good),
          "bad_steps": int(bad), "global_step": int(gs),
          "weight_sum": float(sum(np.sum(w, dtype=np.float64)
                                  for w in weights)),
      })
      records.append(record)
      states.append(_state(weights, scale, good, bad, gs))
    hook.end(sess)
  info["records"] = records
  info["states"] = states
  info["tf115_states"] = tf115_states(args.steps, poison, config)
  with open(args.out, "w") as f:
    json.dump(info, f)


def _state(weights, scale, good, bad, global_step):
  return {"weights": [np.asarray(w).tobytes().hex() for w in weights],
          "loss_scale": float(scale), "good_steps": int(good),
          "bad_steps": int(bad), "global_step": int(global_step)}


def tf115_states(steps, poison, config):
  """The same steps by TF 1.15's optimizer: its state after each."""
  states = []
  with tf.Graph().as_default():
    g = build(harness.Library(harness.ORACLE))
    with tf.compat.v1.Session(config=config) as sess:
      sess.run(tf.compat.v1.global_variables_initializer())
      for step in range(steps):
        x, y = batch(step, step in poison)
        sess.run(g["train_op"], {g["x"]: x, g["y"]: y})
        states.append(_state(*sess.run(
            [g["tvars"]] + g["manager"].variables() + [g["global_step"]])))
  return states


if __name__ == "__main__":
  main(sys.argv[1:])
