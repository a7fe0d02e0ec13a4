# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""LossScaleOptimizer with Horovod: 2 Gloo ranks on 127.0.0.1.

`horovodrun -np 2 -H localhost:2 --gloo` runs `programs/horovod_lso.py`, a
TF1 graph-mode program (ref variables, MonitoredTrainingSession), in two
wrap orders:

* `ncf_outside`: `hvd.DistributedOptimizer(LossScaleOptimizer(opt))`;
* `bert_inside_fp16`: `LossScaleOptimizer(hvd.DistributedOptimizer(opt,
  compression=hvd.Compression.fp16))`.

Each run checks that `hvd.BroadcastGlobalVariablesHook` overwrites rank 1's
different loss scale, counters and weights with rank 0's; that a NaN on rank 1
only skips the step on both ranks; that weights, slots and the loss-scale
state stay bytewise identical across ranks and follow independent references
(`policy_reference.py`, a NumPy momentum SGD on the mean gradient); and what
fp16 compression does to a gradient below float16's range in each wrap order.

Horovod is built only into the TF 2.15 environment (see
`scripts/extra_setup_tf215.sh`); elsewhere this test skips. Under
`CMP_TEST_ENV=tf215` (scripts/run_tests.sh) a missing Horovod is a failure,
not a skip, so CI cannot pass without running it; only a contributor's
`CMP_SKIP_HOROVOD=1` outside CI makes it a skip.
"""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

import policy_reference
import program_util

_PROGRAM = program_util.program_path("horovod_lso.py")
_HOROVODRUN = os.path.join(os.path.dirname(sys.executable), "horovodrun")
_NUM_RANKS = 2
_STEPS = 7
_POISON_STEPS = (2, 4)
# (wrap order, compression) per configuration.
_CONFIGS = {
    "ncf_outside": ("outside", "none"),
    "bert_inside_fp16": ("inside", "fp16"),
}
# Bounded: a rank that cannot reach its peer must not hang the suite.
_RUN_TIMEOUT_S = 300
_GLOO_TIMEOUT_S = 120


def _horovod_missing_reason():
  """Why Horovod cannot run here, or None when it can."""
  if importlib.util.find_spec("horovod") is None:
    if tf.__version__.startswith("2.15."):
      # CI's tf215_py39 chroot: the Horovod build (a compiler, cmake and
      # Python headers in the chroot, minutes of compiling) is left out.
      return ("Horovod is not installed in this environment (CI builds it "
              "only in the Python 3.11 TF 2.15 environment, tf215, by "
              "scripts/extra_setup_tf215.sh).")
    return ("Horovod is not installed in this environment (it is built only "
            "for TF 2.15, by scripts/extra_setup_tf215.sh; Horovod 0.28.1 "
            "does not build against TF {} without source patches).".format(
                tf.__version__))
  if not os.path.exists(_HOROVODRUN):
    return "horovodrun not found next to {}.".format(sys.executable)
  return None


def _child_env():
  """The environment for the ranks: the package importable as it is here."""
  env = program_util.child_env()
  env["CUDA_VISIBLE_DEVICES"] = "-1"
  # Each rank gets 1 of the 2 cores; more threads only contend.
  env["OMP_NUM_THREADS"] = "1"
  env["HOROVOD_GLOO_TIMEOUT_SECONDS"] = str(_GLOO_TIMEOUT_S)
  return env


def _run_horovod(wrap, compression, out_dir):
  """Runs both ranks under horovodrun; returns their JSON records."""
  os.makedirs(out_dir)
  cmd = [_HOROVODRUN, "-np", str(_NUM_RANKS), "-H",
         "localhost:%d" % _NUM_RANKS, "--gloo",
         # Loopback only: Gloo's connections and the rendezvous stay local.
         "--network-interface", "lo",
         "--start-timeout", str(_GLOO_TIMEOUT_S),
         "--gloo-timeout-seconds", str(_GLOO_TIMEOUT_S),
         sys.executable, _PROGRAM, "--wrap", wrap, "--compression",
         compression, "--steps", str(_STEPS), "--poison-steps",
         ",".join(map(str, _POISON_STEPS)), "--out-dir", out_dir]
  log_path = os.path.join(out_dir, "horovodrun.log")
  with open(log_path, "w") as log:
    proc = subprocess.Popen(cmd, env=_child_env(), stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
      code = proc.wait(timeout=_RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
      # horovodrun's ranks are in its session: end them all with it.
      os.killpg(proc.pid, 9)
      proc.wait()
      code = "timeout after %d s" % _RUN_TIMEOUT_S
  if code != 0:
    with open(log_path) as f:
      raise AssertionError("horovodrun failed (%s): %s\n%s" % (
          code, " ".join(cmd), f.read()[-6000:]))
  results = []
  for rank in range(_NUM_RANKS):
    with open(os.path.join(out_dir, "rank%d.json" % rank)) as f:
      results.append(json.load(f))
  return results


def _numpy_reference(finite_flags):
  return policy_reference.data_parallel_momentum_sgd(finite_flags, _NUM_RANKS)


def _floats(hex_bytes):
  return np.frombuffer(bytes.fromhex(hex_bytes), np.float32)


_PARAMS = [dict(testcase_name=name, config=name) for name in _CONFIGS]


class HorovodTest(parameterized.TestCase, tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    reason = _horovod_missing_reason()
    if reason is not None:
      # CMP_SKIP_HOROVOD=1 (scripts/extra_setup_tf215.sh builds nothing)
      # is a contributor's choice, never CI's.
      # So is building it without root, where the build tools are
      # missing: that script then leaves its reason in the venv.
      outside_ci = os.environ.get("CI", "").lower() in ("", "0", "false")
      unavailable = os.path.join(sys.prefix, ".horovod-unavailable")
      if outside_ci and os.path.exists(unavailable):
        with open(unavailable) as f:
          reason = f.read().strip()
      chose_to_skip = outside_ci and (
          os.environ.get("CMP_SKIP_HOROVOD") == "1" or
          os.path.exists(unavailable))
      if os.environ.get("CMP_TEST_ENV") == "tf215" and not chose_to_skip:
        raise AssertionError(
            "CMP_TEST_ENV=tf215 but Horovod cannot run: " + reason +
            " Run scripts/extra_setup_tf215.sh VENV.")
      raise unittest.SkipTest(reason)
    cls._tmp = tempfile.TemporaryDirectory(prefix="cmp_horovod_")
    cls.results, cls.wall_s = {}, {}
    for name, (wrap, compression) in _CONFIGS.items():
      start = time.monotonic()
      cls.results[name] = _run_horovod(wrap, compression,
                                       os.path.join(cls._tmp.name, name))
      cls.wall_s[name] = time.monotonic() - start
    cls.expected_flags = [s not in _POISON_STEPS for s in range(_STEPS)]

  @classmethod
  def tearDownClass(cls):
    if hasattr(cls, "_tmp"):
      cls._tmp.cleanup()
    super().tearDownClass()

  @parameterized.named_parameters(*_PARAMS)
  def test_two_gloo_ranks_run(self, config):
    results = self.results[config]
    self.assertEqual([r["rank"] for r in results], [0, 1])
    for result in results:
      self.assertEqual(result["size"], _NUM_RANKS)
      self.assertEqual(result["horovod_version"], "0.28.1")
      self.assertLen(result["records"], _STEPS)

  @parameterized.named_parameters(*_PARAMS)
  def test_broadcast_hook_overwrites_the_manager_state(self, config):
    rank0, rank1 = self.results[config]
    for result in (rank0, rank1):
      # The hook broadcasts GLOBAL_VARIABLES: the manager's are among them.
      self.assertEqual(result["manager_variables"],
                       ["bad_steps:0", "good_steps:0", "loss_scale:0"])
      self.assertEqual(result["manager_variables_broadcast"], [True] * 3)
    # Every rank started elsewhere...
    self.assertEqual(
        rank0["before_broadcast"],
        dict(loss_scale=256.0, good_steps=1, bad_steps=1,
             w=rank0["before_broadcast"]["w"]))
    self.assertEqual(
        (rank1["before_broadcast"]["loss_scale"],
         rank1["before_broadcast"]["good_steps"],
         rank1["before_broadcast"]["bad_steps"]), (512.0, 2, 3))
    self.assertNotEqual(rank0["before_broadcast"]["w"],
                        rank1["before_broadcast"]["w"])
    # ... and after the broadcast every rank holds rank 0's values.
    for result in (rank0, rank1):
      after = result["after_broadcast"]
      self.assertEqual(
          (after["loss_scale"], after["good_steps"], after["bad_steps"]),
          (256.0, 1, 1))
      self.assertEqual(after["weights"]["w"], rank0["before_broadcast"]["w"])
      self.assertEqual(after["global_step"], 0)

  @parameterized.named_parameters(*_PARAMS)
  def test_nan_on_one_rank_skips_the_step_on_every_rank(self, config):
    for result in self.results[config]:
      records = result["records"]
      self.assertEqual([r["finite"] for r in records], self.expected_flags,
                       msg="rank %d" % result["rank"])
      for step in _POISON_STEPS:
        # Skipped: model, momentum slots and global_step as before the step.
        for key in ("weights", "slots", "global_step"):
          self.assertEqual(records[step][key], records[step - 1][key],
                           msg="rank %d step %d" % (result["rank"], step))
      self.assertEqual(
          [r["global_step"] for r in records],
          list(np.cumsum(self.expected_flags)))

  @parameterized.named_parameters(*_PARAMS)
  def test_weights_and_slots_are_bytewise_identical_across_ranks(self, config):
    rank0, rank1 = self.results[config]
    for a, b in zip(rank0["records"], rank1["records"]):
      self.assertEqual(a["weights"], b["weights"])
      self.assertEqual(a["slots"], b["slots"])

  @parameterized.named_parameters(*_PARAMS)
  def test_loss_scale_moves_in_lockstep_as_the_policy_says(self, config):
    # The broadcast state (256, good 1, bad 1) is where the policy starts.
    expected = policy_reference.exponential_policy(
        self.expected_flags, 256.0, incr_every_n_steps=2,
        decr_every_n_nan_or_inf=2, incr_ratio=2, decr_ratio=0.5, good=1,
        bad=1)
    self.assertEqual([s for s, _, _ in expected],
                     [512., 512., 512., 512., 256., 256., 512.])
    for result in self.results[config]:
      observed = [(r["loss_scale"], r["good_steps"], r["bad_steps"])
                  for r in result["records"]]
      self.assertEqual(observed, expected, msg="rank %d" % result["rank"])

  @parameterized.named_parameters(*_PARAMS)
  def test_weights_follow_mean_gradient_momentum_sgd(self, config):
    # fp16 compression rounds each all-reduced (scaled) gradient to 11 bits.
    tol = (dict(rtol=5e-3, atol=1e-3) if _CONFIGS[config][1] == "fp16" else
           dict(rtol=1e-5, atol=1e-6))
    records = self.results[config][0]["records"]
    for step, (w, b) in enumerate(_numpy_reference(self.expected_flags)):
      self.assertAllClose(_floats(records[step]["weights"]["w"]).reshape(3, 2),
                          w, msg="step %d" % step, **tol)
      self.assertAllClose(_floats(records[step]["weights"]["b"]), b,
                          msg="step %d" % step, **tol)

  @parameterized.named_parameters(*_PARAMS)
  def test_fp16_compression_keeps_small_grads_only_inside_the_lso(self,
                                                                   config):
    for result in self.results[config]:
      probe = result["fp16_probe"]
      # Inside: Horovod compresses the scaled gradient, 2**-30 * 2**20.
      self.assertEqual(probe["inside"], [2.0**-30] * 4)
      # Outside: it compresses the unscaled 2**-30, below float16's smallest
      # subnormal (2**-24), which flushes to zero.
      self.assertEqual(probe["outside"], [0.0] * 4)


if __name__ == "__main__":
  tf.test.main()
