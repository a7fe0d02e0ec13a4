# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""TF1's parameter-server engine: local clusters of one PS and two workers.

`tests/programs/ps_train.py` (the program docs/training_loops.md shows)
trains real in-process `tf.distribute.Server`s on loopback ports, with
`replica_device_setter` and `MonitoredTrainingSession`, workers in lockstep.
Worker 1's batch is NaN on its third step. The model is linear plus an
embedding, whose gradient `SyncReplicasOptimizer` aggregates in a sparse
accumulator. Every record the chief read from the PS is compared with
`policy_reference.parameter_server_sgd` (weights, embedding, `global_step`)
and `policy_reference.exponential_policy` (the loss-scale state), which
know nothing of the package; the state and the update's lock must be on
the PS.

`WrapOrderTest` builds graphs in this process: the refused wrap order, the
lock's placement with two parameter servers, and skipped steps of
gradients taken out of dense and sparse accumulators, with and without a
local gradient among them.

Three programs run at once in setUpClass, about 20 s on 2 cores: every wrap
order and the controls without loss scaling in one process; a run whose
process is SIGKILLed after step 4 (the chief's last checkpoint is at
`global_step` 4); and then its restart from that checkpoint. A stalled run
(the old token stall) fails by the program's op timeout (30 s) and the
subprocess timeout here, never by hanging.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile

import numpy as np
import tensorflow as tf

import contrib_mixed_precision as cmp
import policy_reference
import program_util

_STEPS = 8
_MANAGER_ARGS = dict(init_loss_scale=2**8, incr_every_n_steps=3,
                     decr_every_n_nan_or_inf=1, incr_ratio=2, decr_ratio=0.5)
_RUNS = ("sync", "async", "sync-unscaled", "async-unscaled")
_KILL_AFTER_STEP = 4
_SAVE_STEPS = 2
_TIMEOUT_S = 240


def _replay(sync, skips_nan):
  return policy_reference.parameter_server_sgd(sync, skips_nan, _STEPS,
                                               embedding=True)


def _start(out, *args):
  return subprocess.Popen(
      [sys.executable, program_util.program_path("ps_train.py"), "--out", out,
       "--steps", str(_STEPS)] + list(args),
      env=program_util.child_env(), stdout=subprocess.PIPE,
      stderr=subprocess.STDOUT)


def _finish(proc, out, expect_kill=False):
  """Waits for `proc` (bounded); returns (its JSON output or None, error)."""
  try:
    log, _ = proc.communicate(timeout=_TIMEOUT_S)
  except subprocess.TimeoutExpired:
    proc.kill()
    log, _ = proc.communicate()
  log = log.decode("utf-8", "replace")[-6000:]
  result = None
  if os.path.exists(out):
    with open(out) as f:
      result = json.load(f)
  if expect_kill and proc.returncode != -signal.SIGKILL:
    return result, ("expected the run to be SIGKILLed, got exit status {}; "
                    "its output {}:\n{}".format(proc.returncode, result, log))
  if not expect_kill and proc.returncode != 0:
    return result, "ps_train.py failed with exit status {}:\n{}".format(
        proc.returncode, log)
  return result, None


class ParameterServerClusterTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls._tmp = tempfile.TemporaryDirectory(prefix="cmp_ps_")
    tmp = cls._tmp.name
    cls.train_dir = os.path.join(tmp, "train")
    restart = ["--runs", "sync", "--train-dir", cls.train_dir,
               "--save-steps", str(_SAVE_STEPS)]
    outs = [os.path.join(tmp, name) for name in ("all.json", "killed.json",
                                                 "resumed.json")]
    main = _start(outs[0], "--runs", ",".join(_RUNS))
    killed = _start(outs[1], "--kill-after-step", str(_KILL_AFTER_STEP),
                    *restart)
    # Failures are kept for the tests that need the run, not raised here.
    cls.resumed = cls.checkpoint = None
    try:
      _, cls.restart_error = _finish(killed, outs[1], expect_kill=True)
      if cls.restart_error is None:
        cls.checkpoint = tf.train.load_checkpoint(cls.train_dir)
        resumed, cls.restart_error = _finish(_start(outs[2], *restart),
                                             outs[2])
        cls.resumed = resumed and resumed["sync"]
    finally:
      cls.results, cls.main_error = _finish(main, outs[0])

  @classmethod
  def tearDownClass(cls):
    cls._tmp.cleanup()
    super().tearDownClass()

  def _assert_follows_replay(self, records, expected, loss_scaling=True,
                             start=0):
    """`records` are `expected[start:]`, with the policy's loss-scale state."""
    states = policy_reference.exponential_policy(
        [e["finite"] for e in expected], **_MANAGER_ARGS)
    self.assertLen(records, len(expected) - start)
    for got, want, state in zip(records, expected[start:], states[start:]):
      where = "step {} worker {}".format(want["step"], want["worker"])
      self.assertEqual((got["step"], got["worker"], got["global_step"]),
                       (want["step"], want["worker"], want["global_step"]),
                       msg=where)
      self.assertAllClose(got["w"], want["w"], rtol=1e-5, atol=1e-6,
                          msg=where)
      self.assertAllClose(got["b"], want["b"], rtol=1e-5, atol=1e-6,
                          msg=where)
      self.assertAllClose(got["emb"], want["emb"], rtol=1e-5, atol=1e-6,
                          msg=where)
      if loss_scaling:
        self.assertEqual(
            (got["loss_scale"], got["good_steps"], got["bad_steps"]), state,
            msg=where)

  def _run(self, name):
    if self.main_error:
      self.fail(self.main_error)
    result = self.results[name]
    self.assertEqual(result["errors"], [], msg=name)
    return result["records"]

  def test_sync_replicas_around_lso_skips_the_nan_aggregate_and_goes_on(self):
    expected = _replay(True, True)
    self.assertEqual([e["finite"] for e in expected],
                     [True, True, False] + [True] * 5)
    records = self._run("sync")
    self._assert_follows_replay(records, expected)
    # The skipped aggregate changed no weight, for every worker at once.
    self.assertEqual(records[2]["w"], records[1]["w"])
    # Only the NaN worker's first example is NaN: the rows of the
    # embedding's aggregate at the other ids were finite, and still skipped.
    self.assertEqual(records[2]["emb"], records[1]["emb"])
    self.assertNotEqual(records[3]["emb"], records[2]["emb"])
    self.assertEqual([r["loss_scale"] for r in records],
                     [256, 256, 128, 128, 128, 256, 256, 256])

  def test_sync_skip_still_advances_global_step_so_tokens_stay_fresh(self):
    # One step per aggregate, applied or skipped: the token the chief hands
    # out after the skip matches the accumulators' clock.
    self.assertEqual([r["global_step"] for r in self._run("sync")],
                     list(range(1, _STEPS + 1)))

  def test_async_lso_skips_only_the_nan_update(self):
    expected = _replay(False, True)
    records = self._run("async")
    self._assert_follows_replay(records, expected)
    skipped = [i for i, e in enumerate(expected) if not e["finite"]]
    self.assertEqual(skipped, [5])  # Worker 1, step 2.
    # TF 1.15's default outside SyncReplicasOptimizer: no increment.
    self.assertEqual(records[5]["global_step"], records[4]["global_step"])
    self.assertEqual(records[5]["loss_scale"], records[4]["loss_scale"] / 2)

  def test_without_loss_scaling_the_nan_reaches_the_model(self):
    for name, sync in (("sync-unscaled", True), ("async-unscaled", False)):
      expected = _replay(sync, False)
      records = self._run(name)
      self._assert_follows_replay(records, expected, loss_scaling=False)
      self.assertTrue(np.all(np.isnan(records[-1]["w"])), msg=name)

  def test_loss_scale_state_and_its_lock_live_on_the_ps(self):
    for name in ("sync", "async"):
      self._run(name)
      devices = self.results[name]["devices"]
      self.assertEqual(
          {devices[k] for k in ("loss_scale", "good_steps", "bad_steps",
                                "global_step", "w", "emb")},
          {"/job:ps/task:0"}, msg=name)
      # One lock, shared by every worker: on the PS, not on a worker.
      self.assertEqual(self.results[name]["mutex_devices"],
                       ["/job:ps/task:0"], msg=name)

  def test_chief_checkpoint_holds_the_loss_scale_state(self):
    expected = _replay(True, True)
    states = policy_reference.exponential_policy(
        [e["finite"] for e in expected], **_MANAGER_ARGS)
    if self.restart_error:
      self.fail(self.restart_error)
    saved_at = _KILL_AFTER_STEP  # The step whose aggregate was unsaved.
    self.assertEqual(self.checkpoint.get_tensor("global_step"), saved_at)
    self.assertEqual(
        (float(self.checkpoint.get_tensor("loss_scale")),
         int(self.checkpoint.get_tensor("good_steps")),
         int(self.checkpoint.get_tensor("bad_steps"))), states[saved_at - 1])
    # Mid-way through a run of good steps: the restart must not reset it.
    self.assertEqual(states[saved_at - 1], (128.0, 1, 0))

  def test_restart_from_chief_checkpoint_continues_the_same_trajectory(self):
    if self.restart_error:
      self.fail(self.restart_error)
    self.assertEqual(self.resumed["errors"], [])
    self.assertEqual(self.resumed["first_step"], _KILL_AFTER_STEP)
    expected = _replay(True, True)
    self._assert_follows_replay(self.resumed["records"], expected,
                                start=_KILL_AFTER_STEP)
    uninterrupted = self._run("sync")[_KILL_AFTER_STEP:]
    self.assertEqual(self.resumed["records"], uninterrupted)


class WrapOrderTest(tf.test.TestCase):

  def test_docs_show_the_tested_program(self):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "docs", "training_loops.md")) as f:
      docs = f.read()
    section = docs[docs.index("## Parameter servers"):]
    section = section[:section.index("\n## ")]
    blocks = section.split("```python\n")[1:]
    with open(program_util.program_path("ps_train.py")) as f:
      program = f.read()
    self.assertLen(blocks, 2)
    for block in blocks:
      self.assertIn(block[:block.index("```")], program)

  def test_lso_around_sync_replicas_is_refused_naming_the_working_order(self):
    with tf.Graph().as_default():
      sync = tf.compat.v1.train.SyncReplicasOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(0.1),
          replicas_to_aggregate=2)
      with self.assertRaisesRegex(
          TypeError, r"cannot wrap a SyncReplicasOptimizer.*"
          r"SyncReplicasOptimizer\(LossScaleOptimizer\(opt, "
          r"loss_scale_manager\)"):
        cmp.LossScaleOptimizer(sync, cmp.FixedLossScaleManager(128))

  def test_outside_sync_replicas_a_skip_leaves_global_step_alone(self):
    # The accumulator check must not catch ordinary graphs.
    with tf.Graph().as_default():
      global_step = tf.compat.v1.train.get_or_create_global_step()
      v = tf.compat.v1.get_variable("v", initializer=1.0)
      opt = cmp.LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(1.0),
          cmp.FixedLossScaleManager(8))
      train_op = opt.apply_gradients([(tf.constant(float("nan")), v)],
                                     global_step)
      with self.cached_session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        sess.run(train_op)
        self.assertEqual(sess.run([global_step, v]), [0, 1.0])

  def test_lock_is_placed_with_the_scale_under_replica_device_setter(self):
    # Two parameter servers: the state variables are spread round-robin,
    # and the update's lock (and both ends of each locking) must sit with
    # `loss_scale`, the variable it guards, never on the worker.
    with tf.Graph().as_default() as graph:
      cluster = tf.train.ClusterSpec({
          "ps": ["127.0.0.1:1", "127.0.0.1:2"], "worker": ["127.0.0.1:3"]})
      with tf.compat.v1.device(tf.compat.v1.train.replica_device_setter(
          worker_device="/job:worker/task:0", cluster=cluster)):
        v = tf.compat.v1.get_variable("v", initializer=1.0)
        manager = cmp.ExponentialUpdateLossScaleManager(8, 2)
        opt = cmp.LossScaleOptimizer(
            tf.compat.v1.train.GradientDescentOptimizer(1.0), manager)
        opt.minimize(v * v)
      scale_device = manager.variables()[0].device
      self.assertStartsWith(scale_device, "/job:ps/")
      lock_ops = [op for op in graph.get_operations()
                  if op.type in ("MutexV2", "MutexLock", "ConsumeMutexLock")]
      self.assertEqual(sorted(op.type for op in lock_ops),
                       ["ConsumeMutexLock", "MutexLock", "MutexV2"])
      for op in lock_ops:
        self.assertEqual(scale_device, op.device, msg=op.name)

  def _accumulated_step(self, local_dense):
    """A skipped step of gradients taken out of accumulators.

    A dense and a sparse (`IndexedSlices`) gradient, each taken from its
    accumulator as `SyncReplicasOptimizer` takes them; with `local_dense`,
    the dense one is computed locally instead. The sparse aggregate holds a
    NaN. Returns `(global_step, dense variable, table)` after the step.
    """
    with tf.Graph().as_default():
      global_step = tf.compat.v1.train.get_or_create_global_step()
      v = tf.compat.v1.get_variable("v", initializer=[1.0, 2.0])
      table = tf.compat.v1.get_variable("table", initializer=[[1.0], [2.0]])
      dense_acc = tf.compat.v1.ConditionalAccumulator(
          tf.float32, shape=[2], shared_name="dense")
      sparse_acc = tf.compat.v1.SparseConditionalAccumulator(
          tf.float32, shape=[2, 1], shared_name="sparse")
      fill = [
          dense_acc.apply_grad([0.5, 0.5], local_step=0),
          sparse_acc.apply_indexed_slices_grad(
              tf.IndexedSlices(tf.constant([[float("nan")]]),
                               tf.constant([1], tf.int64),
                               tf.constant([2, 1], tf.int64)),
              local_step=0)]
      dense = (tf.constant([0.5, 0.5]) if local_dense else
               dense_acc.take_grad(1))
      opt = cmp.LossScaleOptimizer(
          tf.compat.v1.train.GradientDescentOptimizer(1.0),
          cmp.FixedLossScaleManager(8))
      train_op = opt.apply_gradients(
          [(dense, v), (sparse_acc.take_indexed_slices_grad(1), table)],
          global_step)
      with self.cached_session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        sess.run(fill)
        sess.run(train_op)
        return [x.tolist() for x in sess.run([global_step, v, table])]

  def test_skipped_aggregate_from_dense_and_sparse_accumulators_counts(self):
    # As inside SyncReplicasOptimizer: the takes moved the accumulators'
    # clock on, so the skipped step advances global_step (and nothing
    # else), or the next tokens would be stale.
    self.assertEqual(self._accumulated_step(local_dense=False),
                     [1, [1.0, 2.0], [[1.0], [2.0]]])

  def test_skip_of_a_step_not_wholly_from_accumulators_does_not_count(self):
    # One gradient computed locally: not SyncReplicasOptimizer's aggregate,
    # so TF 1.15's default holds and the skip leaves global_step alone.
    self.assertEqual(self._accumulated_step(local_dense=True),
                     [0, [1.0, 2.0], [[1.0], [2.0]]])


if __name__ == "__main__":
  tf.test.main()
