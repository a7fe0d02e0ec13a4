# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""LossScaleOptimizer under a real 2-worker MultiWorkerMirroredStrategy.

Two worker processes on 127.0.0.1 (TF_CONFIG, free ports picked here) run
`programs/multiworker_lso.py`: a TF2 custom training loop, `strategy.run`
inside a `tf.function`, with the TF1 `MomentumOptimizer` wrapped in
`LossScaleOptimizer`. On two steps only worker 1's replica has NaN
gradients. The expectations come from outside the package: the step's
finite flags are known by construction, the loss-scale trajectory comes from
the pure-Python policy in `policy_reference.py`, and the weights from a NumPy
re-implementation of averaged-gradient momentum SGD.

The workers run once per test class (about a minute on 2 cores); each test
checks one property of that run.
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np
import tensorflow as tf

import policy_reference
import program_util

_PROGRAM = program_util.program_path("multiworker_lso.py")
_NUM_WORKERS = 2
_STEPS = 7
# Non-consecutive bad steps: TF 1.15's policy keeps counting bad steps across
# the good step between them, so the second one lowers the scale.
_POISON_STEPS = (2, 4)
_INIT_SCALE = 2.0**8
# Bounded: a worker that cannot reach its peer must not hang the suite.
_WORKER_TIMEOUT_S = 300
# Per collective: generous, since one worker may still be tracing its
# tf.function on a loaded 2-core machine while the other waits.
_COLLECTIVE_TIMEOUT_S = 120


def _free_ports(n):
  """`n` distinct loopback ports that are free right now."""
  sockets = []
  try:
    for _ in range(n):
      s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
      s.bind(("127.0.0.1", 0))
      sockets.append(s)
    return [s.getsockname()[1] for s in sockets]
  finally:
    for s in sockets:
      s.close()


def _child_env():
  """The environment for a worker: the package importable as it is here."""
  env = program_util.child_env()
  env["CUDA_VISIBLE_DEVICES"] = "-1"
  return env


def _run_workers(out_dir):
  """Runs the workers; returns their JSON records, or raises with logs."""
  last_error = None
  # A port picked here can be taken before the worker binds it: retry once.
  for attempt in range(2):
    ports = _free_ports(_NUM_WORKERS)
    cluster = {"worker": ["127.0.0.1:%d" % p for p in ports]}
    procs, logs, outs = [], [], []
    for index in range(_NUM_WORKERS):
      env = _child_env()
      env["TF_CONFIG"] = json.dumps(
          {"cluster": cluster, "task": {"type": "worker", "index": index}})
      outs.append(os.path.join(out_dir, "worker%d-%d.json" % (index, attempt)))
      logs.append(os.path.join(out_dir, "worker%d-%d.log" % (index, attempt)))
      with open(logs[-1], "w") as log:
        procs.append(subprocess.Popen(
            [sys.executable, _PROGRAM, "--out", outs[-1],
             "--steps", str(_STEPS),
             "--timeout", str(_COLLECTIVE_TIMEOUT_S),
             "--poison-steps", ",".join(map(str, _POISON_STEPS))],
            env=env, stdout=log, stderr=subprocess.STDOUT))
    deadline = time.monotonic() + _WORKER_TIMEOUT_S
    codes = []
    for proc in procs:
      try:
        codes.append(proc.wait(timeout=max(1, deadline - time.monotonic())))
      except subprocess.TimeoutExpired:
        codes.append("timeout")
    for proc in procs:
      if proc.poll() is None:
        proc.kill()
        proc.wait()
    if codes == [0] * _NUM_WORKERS:
      results = []
      for path in outs:
        with open(path) as f:
          results.append(json.load(f))
      return results
    tails = []
    for index, path in enumerate(logs):
      with open(path) as f:
        tails.append("--- worker %d (exit %s) ---\n%s" % (
            index, codes[index], f.read()[-3000:]))
    last_error = "\n".join(tails)
    if "ddress already in use" not in last_error:
      break
  raise AssertionError("MultiWorkerMirroredStrategy workers failed:\n" +
                       last_error)


def _numpy_reference(finite_flags):
  return policy_reference.data_parallel_momentum_sgd(finite_flags, _NUM_WORKERS)


class MultiWorkerTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls._tmp = tempfile.TemporaryDirectory(prefix="cmp_multiworker_")
    start = time.monotonic()
    cls.results = _run_workers(cls._tmp.name)
    cls.wall_s = time.monotonic() - start
    cls.expected_flags = [s not in _POISON_STEPS for s in range(_STEPS)]

  @classmethod
  def tearDownClass(cls):
    cls._tmp.cleanup()
    super().tearDownClass()

  def test_two_workers_each_run_one_replica(self):
    self.assertEqual([r["task_id"] for r in self.results], [0, 1])
    for result in self.results:
      self.assertEqual(result["num_replicas"], _NUM_WORKERS)
      self.assertLen(result["records"], _STEPS)

  def test_one_poisoned_replica_skips_the_step_on_every_worker(self):
    for result in self.results:
      self.assertEqual([r["finite"] for r in result["records"]],
                       self.expected_flags,
                       msg="worker %d" % result["task_id"])
      records = result["records"]
      for step in _POISON_STEPS:
        # Skipped: model and momentum slots exactly as after the step before.
        self.assertEqual(records[step]["weights"],
                         records[step - 1]["weights"])
        self.assertEqual(records[step]["slots"], records[step - 1]["slots"])
      for step in range(1, _STEPS):
        if step not in _POISON_STEPS:
          self.assertNotEqual(records[step]["weights"],
                              records[step - 1]["weights"])

  def test_weights_and_slots_are_bytewise_identical_across_workers(self):
    first, second = self.results
    for a, b in zip(first["records"], second["records"]):
      self.assertEqual(a["weights"], b["weights"], msg="step %d" % a["step"])
      self.assertEqual(a["slots"], b["slots"], msg="step %d" % a["step"])

  def test_loss_scale_moves_once_per_step_as_the_policy_says(self):
    expected = policy_reference.exponential_policy(
        self.expected_flags, _INIT_SCALE, incr_every_n_steps=2,
        decr_every_n_nan_or_inf=2, incr_ratio=2, decr_ratio=0.5)
    # Spelled out too, so a reader sees the trajectory under test.
    self.assertEqual([s for s, _, _ in expected],
                     [256., 512., 512., 512., 256., 256., 512.])
    for result in self.results:
      observed = [(r["loss_scale"], r["good_steps"], r["bad_steps"])
                  for r in result["records"]]
      self.assertEqual(observed, expected, msg="worker %d" % result["task_id"])

  def test_weights_follow_mean_gradient_momentum_sgd(self):
    expected = _numpy_reference(self.expected_flags)
    for step, (w, b) in enumerate(expected):
      weights = self.results[0]["records"][step]["weights"]
      self.assertAllClose(
          np.frombuffer(bytes.fromhex(weights["w:0"]), np.float32).reshape(
              3, 2), w, rtol=1e-5, atol=1e-6, msg="step %d" % step)
      self.assertAllClose(
          np.frombuffer(bytes.fromhex(weights["b:0"]), np.float32), b,
          rtol=1e-5, atol=1e-6, msg="step %d" % step)


if __name__ == "__main__":
  tf.test.main()
