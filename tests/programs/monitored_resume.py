# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""A TF1 `MonitoredTrainingSession` program that checkpoints and resumes.

Run it twice on the same `--checkpoint-dir` and the second run continues from
the latest checkpoint (`MonitoredTrainingSession` restores it). The data of
each step is a pure function of `global_step`, computed in the graph, so a
resumed run sees exactly the batches an uninterrupted run would.

`LossScaleOptimizer(..., advance_global_step_on_skip=True)` makes skipped
steps advance `global_step` too, so every step has its own batch and
`StopAtStepHook` counts every step. Steps in `--poison-steps` (global-step
values) put a NaN into the batch.

After every step a hook appends one JSON line to `--log` (flushed and
fsync'ed, so a SIGKILL loses nothing already written): the global step the
step ran at, the finite flag, the loss, and, read after the step, the
loss-scale state, `global_step` and the weights. With `--hang-at-step N` the
program stops making progress after logging step N and waits to be killed.

Usage: python monitored_resume.py --checkpoint-dir DIR --log FILE
         [--last-step 24] [--save-steps 5] [--hang-at-step N]
"""

import argparse
import json
import os
import sys
import time

import numpy as np
import tensorflow as tf

import contrib_mixed_precision as cmp


class StepLogger(tf.compat.v1.train.SessionRunHook):
  """Logs each step, and optionally hangs so a test can kill the process."""

  def __init__(self, path, fetches, state, hang_at_step):
    self._path = path
    self._fetches = fetches
    self._state = state
    self._hang_at_step = hang_at_step

  def before_run(self, run_context):
    return tf.compat.v1.train.SessionRunArgs(self._fetches)

  def after_run(self, run_context, run_values):
    results = run_values.results
    # A separate run: the state after this step's updates, on the raw
    # session (no hooks run).
    state = run_context.session.run(self._state)
    record = {
        "step": int(results["step"]), "finite": bool(results["finite"]),
        "loss": float(results["loss"]),
        "loss_scale": float(state["loss_scale"]),
        "good_steps": int(state["good_steps"]),
        "bad_steps": int(state["bad_steps"]),
        "global_step": int(state["global_step"]),
        "weights": [np.asarray(w).ravel().tolist() for w in state["weights"]],
        "pid": os.getpid(),
    }
    with open(self._path, "a") as f:
      f.write(json.dumps(record) + "\n")
      f.flush()
      os.fsync(f.fileno())
    if record["step"] == self._hang_at_step:
      while True:  # Killed here, with unsaved steps since the checkpoint.
        time.sleep(1)


def main(argv):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--checkpoint-dir", required=True)
  parser.add_argument("--log", required=True)
  parser.add_argument("--last-step", type=int, default=24)
  parser.add_argument("--save-steps", type=int, default=5)
  parser.add_argument("--poison-steps", default="3,9,14,15")
  parser.add_argument("--hang-at-step", type=int, default=-1)
  args = parser.parse_args(argv)
  poison = [int(s) for s in args.poison_steps.split(",") if s]

  tf.compat.v1.disable_v2_behavior()
  global_step = tf.compat.v1.train.get_or_create_global_step()
  # A copy, not the ref variable itself: the step's own increment must not
  # show through in this step's fetch.
  step = tf.cast(global_step, tf.int32)
  x = tf.random.stateless_normal([16, 4], seed=tf.stack([step, 7]))
  y = tf.reduce_sum(x * [[1.0, -2.0, 0.5, 3.0]], axis=1, keepdims=True) + 1.0
  poisoned = tf.reduce_any(tf.equal(step, poison)) if poison else False
  x = tf.where(poisoned, x * np.nan, x)
  w = tf.compat.v1.get_variable("w", [4, 1],
                                initializer=tf.zeros_initializer())
  b = tf.compat.v1.get_variable("b", [1], initializer=tf.zeros_initializer())
  loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))

  manager = cmp.ExponentialUpdateLossScaleManager(
      init_loss_scale=2**10, incr_every_n_steps=4, decr_every_n_nan_or_inf=2,
      incr_ratio=2, decr_ratio=0.5)
  opt = cmp.LossScaleOptimizer(
      tf.compat.v1.train.AdamOptimizer(0.1), manager,
      advance_global_step_on_skip=True)
  train_op = opt.minimize(loss, global_step=global_step)

  scale_var, good_var, bad_var = manager.variables()
  logger = StepLogger(
      args.log,
      fetches={"step": step, "finite": opt.finite_grads, "loss": loss},
      state={"loss_scale": scale_var, "good_steps": good_var,
             "bad_steps": bad_var, "global_step": global_step,
             "weights": [w, b]},
      hang_at_step=args.hang_at_step)
  config = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=1,
                                    inter_op_parallelism_threads=2)
  with tf.compat.v1.train.MonitoredTrainingSession(
      checkpoint_dir=args.checkpoint_dir,
      save_checkpoint_steps=args.save_steps,
      save_checkpoint_secs=None,
      save_summaries_steps=None,
      save_summaries_secs=None,
      log_step_count_steps=None,
      config=config,
      hooks=[tf.compat.v1.train.StopAtStepHook(last_step=args.last_step),
             logger]) as sess:
    while not sess.should_stop():
      sess.run(train_op)


if __name__ == "__main__":
  main(sys.argv[1:])
