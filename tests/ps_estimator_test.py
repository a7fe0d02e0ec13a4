# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Estimator's `train_and_evaluate` on a chief, a worker and a PS.

`tests/programs/ps_estimator.py` runs once per task, each in its own
process with its own `TF_CONFIG` (loopback ports picked here), with
`LossScaleOptimizer` built in `model_fn`: asynchronously, and synchronously
inside `SyncReplicasOptimizer` with its hook. Both clusters run at once
(about 40 s on 2 cores). The worker's batch is NaN on its third step. Every
record is compared with `policy_reference.parameter_server_sgd` and
`policy_reference.exponential_policy`.

Estimator ships with TensorFlow only up to 2.15 (`tensorflow_estimator`);
elsewhere these tests are skipped.
"""

import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

import tensorflow as tf

import policy_reference
import program_util

# In async mode the worker's turn reaches it first (the skipped update does
# not count), so the chief's turn after it is the last update of the run:
# nothing races with the chief's final checkpoint.
_MAX_STEPS = 7
_MANAGER_ARGS = dict(init_loss_scale=2**8, incr_every_n_steps=3,
                     decr_every_n_nan_or_inf=1, incr_ratio=2, decr_ratio=0.5)
_TIMEOUT_S = 240
_HAS_ESTIMATOR = importlib.util.find_spec("tensorflow_estimator") is not None
_NO_ESTIMATOR = (
    "tensorflow_estimator is not installed: tf.estimator exists only up to "
    "TF 2.15, and this is TF {}.".format(tf.__version__))


def _free_ports(n):
  sockets = [socket.socket() for _ in range(n)]
  try:
    for s in sockets:
      s.bind(("127.0.0.1", 0))
    return [s.getsockname()[1] for s in sockets]
  finally:
    for s in sockets:
      s.close()


def _run_clusters(root):
  """Runs both clusters at once.

  Returns:
    ({mode: [chief record, worker record]}, {mode: error message}).
  """
  procs = {}
  for mode in ("sync", "async"):
    ports = _free_ports(3)
    cluster = {"chief": ["127.0.0.1:%d" % ports[0]],
               "worker": ["127.0.0.1:%d" % ports[1]],
               "ps": ["127.0.0.1:%d" % ports[2]]}
    for task_type in ("ps", "chief", "worker"):
      env = program_util.child_env()
      env["CUDA_VISIBLE_DEVICES"] = "-1"
      env["TF_CONFIG"] = json.dumps(
          {"cluster": cluster, "task": {"type": task_type, "index": 0}})
      out = os.path.join(root, "%s-%s.json" % (mode, task_type))
      log = open(os.path.join(root, "%s-%s.log" % (mode, task_type)), "w")
      procs[mode, task_type] = (subprocess.Popen(
          [sys.executable, program_util.program_path("ps_estimator.py"),
           "--mode", mode, "--model-dir", os.path.join(root, mode),
           "--out", out, "--ready-file", os.path.join(root, mode + ".ready"),
           "--max-steps", str(_MAX_STEPS)],
          env=env, stdout=log, stderr=subprocess.STDOUT), out, log)
  deadline = time.monotonic() + _TIMEOUT_S
  failures = []
  for (mode, task_type), (proc, _, log) in procs.items():
    if task_type == "ps":
      continue
    try:
      code = proc.wait(timeout=max(1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
      code = "timeout"
    if code != 0:
      failures.append((mode, task_type, code, log.name))
  for proc, _, log in procs.values():
    if proc.poll() is None:  # The PS serves forever.
      proc.kill()
      proc.wait()
    log.close()
  results, errors = {}, {}
  for mode in ("sync", "async"):
    report = []
    for failed_mode, task_type, code, path in failures:
      if failed_mode == mode:
        with open(path) as f:
          report.append("--- %s %s (exit %s) ---\n%s" % (
              mode, task_type, code, f.read()[-4000:]))
    if report:
      errors[mode] = "Estimator cluster failed:\n" + "\n".join(report)
      continue
    results[mode] = []
    for task_type in ("chief", "worker"):
      with open(procs[mode, task_type][1]) as f:
        results[mode].append(json.load(f))
  return results, errors


class EstimatorClusterTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls._results, cls._errors = {}, {}
    if not _HAS_ESTIMATOR:
      return
    cls._tmp = tempfile.TemporaryDirectory(prefix="cmp_ps_estimator_")
    cls._results, cls._errors = _run_clusters(cls._tmp.name)

  @classmethod
  def tearDownClass(cls):
    if _HAS_ESTIMATOR:
      cls._tmp.cleanup()
    super().tearDownClass()

  def setUp(self):
    super().setUp()
    if not _HAS_ESTIMATOR:
      self.skipTest(_NO_ESTIMATOR)

  def _run(self, mode):
    if mode in self._errors:
      self.fail(self._errors[mode])
    return self._results[mode]

  def _assert_record(self, got, want, state, where):
    self.assertEqual(got["global_step"], want["global_step"], msg=where)
    self.assertAllClose(got["w"], want["w"], rtol=1e-5, atol=1e-6, msg=where)
    self.assertAllClose(got["b"], want["b"], rtol=1e-5, atol=1e-6, msg=where)
    self.assertEqual((got["loss_scale"], got["good_steps"], got["bad_steps"]),
                     state, msg=where)

  def _replay(self, sync):
    expected = policy_reference.parameter_server_sgd(sync, True, 2 * _MAX_STEPS)
    states = policy_reference.exponential_policy(
        [e["finite"] for e in expected], **_MANAGER_ARGS)
    return expected, states

  def test_sync_replicas_around_lso_follows_the_replay(self):
    chief, worker = self._run("sync")
    expected, states = self._replay(sync=True)
    self.assertFalse(expected[2]["finite"])
    for task in (chief, worker):
      # Both tasks train every step, including the skipped aggregate.
      self.assertLen(task["records"], _MAX_STEPS)
      for i, got in enumerate(task["records"]):
        self._assert_record(got, expected[i], states[i],
                            "task %d step %d" % (task["task"], i))
    self._assert_record(chief["checkpoint"], expected[_MAX_STEPS - 1],
                        states[_MAX_STEPS - 1], "checkpoint")

  def test_async_lso_follows_the_replay(self):
    chief, worker = self._run("async")
    expected, states = self._replay(sync=False)
    # The tasks take turns, chief first.
    merged = [r for pair in zip(chief["records"], worker["records"] + [None])
              for r in pair if r is not None]
    self.assertIn(len(chief["records"]) - len(worker["records"]), (0, 1))
    self.assertFalse(expected[5]["finite"])  # The worker's third step.
    for i, got in enumerate(merged):
      self._assert_record(got, expected[i], states[i], "update %d" % i)
    # The task whose turn reached max_steps stops; the other has one more.
    reached = next(i for i, e in enumerate(expected)
                   if e["global_step"] >= _MAX_STEPS)
    self.assertLen(merged, reached + 2)
    self.assertEqual(reached % 2, 1)  # The worker's turn.
    self._assert_record(chief["checkpoint"], expected[len(merged) - 1],
                        states[len(merged) - 1], "checkpoint")

  def test_loss_scale_state_lives_on_the_ps(self):
    for mode in ("sync", "async"):
      for task in self._run(mode):
        self.assertEqual(set(task["devices"].values()), {"/job:ps/task:0"},
                         msg="%s task %d" % (mode, task["task"]))


if __name__ == "__main__":
  tf.test.main()
