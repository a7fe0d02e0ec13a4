# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""End to end: a `MonitoredTrainingSession` run killed with SIGKILL resumes.

`tests/programs/monitored_resume.py` trains for 24 steps, checkpointing every
5, with NaN batches at fixed global steps. Three processes run it:

1. a reference run, never interrupted;
2. a run that stops making progress after step 13 (the checkpoint at step 10
   exists, steps 10-13 are not saved) and is killed with SIGKILL;
3. the same checkpoint directory, restarted.

The restart must continue exactly from the checkpoint at step 10: the loss
scale, both counters, `global_step`, the weights and Adam's state; every step
it logs equals the reference run's step; and the final checkpoint equals the
reference's. Steps 10-13 of the killed run are redone once, not counted
twice.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import tensorflow as tf

import policy_reference
import program_util

_PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "programs", "monitored_resume.py")
_LAST_STEP = 24
_SAVE_STEPS = 5
_HANG_AT_STEP = 13
_POISON_STEPS = (3, 9, 14, 15)


def _command(checkpoint_dir, log, *extra):
  return [sys.executable, _PROGRAM, "--checkpoint-dir", checkpoint_dir,
          "--log", log, "--last-step", str(_LAST_STEP),
          "--save-steps", str(_SAVE_STEPS),
          "--poison-steps", ",".join(str(s) for s in _POISON_STEPS)
          ] + list(extra)


def _run(checkpoint_dir, log):
  proc = subprocess.run(
      _command(checkpoint_dir, log), env=program_util.child_env(),
      stdout=subprocess.PIPE,
      stderr=subprocess.STDOUT, timeout=300, check=False)
  if proc.returncode != 0:
    raise AssertionError("monitored_resume.py failed ({}):\n{}".format(
        proc.returncode, proc.stdout.decode("utf-8", "replace")[-6000:]))


def _read_log(path):
  if not os.path.exists(path):
    return []
  with open(path) as f:
    return [json.loads(line) for line in f if line.endswith("\n")]


def _run_and_kill(checkpoint_dir, log, timeout=300):
  """Runs until step _HANG_AT_STEP is logged, then SIGKILLs the process."""
  output = tempfile.TemporaryFile()
  proc = subprocess.Popen(
      _command(checkpoint_dir, log, "--hang-at-step", str(_HANG_AT_STEP)),
      env=program_util.child_env(), stdout=output, stderr=subprocess.STDOUT)
  deadline = time.time() + timeout
  try:
    while not any(r["step"] == _HANG_AT_STEP for r in _read_log(log)):
      if proc.poll() is not None:
        output.seek(0)
        raise AssertionError(
            "monitored_resume.py exited ({}) before step {}:\n{}".format(
                proc.returncode, _HANG_AT_STEP,
                output.read().decode("utf-8", "replace")[-6000:]))
      if time.time() > deadline:
        raise AssertionError("step {} was not logged within {}s".format(
            _HANG_AT_STEP, timeout))
      time.sleep(0.2)
  finally:
    if proc.poll() is None:
      os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    output.close()
  return proc.returncode


def _checkpoint_values(prefix):
  reader = tf.train.load_checkpoint(prefix)
  return {name: reader.get_tensor(name)
          for name in reader.get_variable_to_shape_map()}


class MonitoredSessionResumeTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    root = tempfile.mkdtemp()
    cls.reference_dir = os.path.join(root, "reference")
    cls.resumed_dir = os.path.join(root, "resumed")
    reference_log = os.path.join(root, "reference.jsonl")
    killed_log = os.path.join(root, "killed.jsonl")
    resumed_log = os.path.join(root, "resumed.jsonl")
    _run(cls.reference_dir, reference_log)
    cls.kill_status = _run_and_kill(cls.resumed_dir, killed_log)
    # What the killed process left behind, before the restart adds to it.
    cls.checkpoint_after_kill = tf.train.latest_checkpoint(cls.resumed_dir)
    cls.state_after_kill = _checkpoint_values(cls.checkpoint_after_kill)
    _run(cls.resumed_dir, resumed_log)
    cls.reference = _read_log(reference_log)
    cls.killed = _read_log(killed_log)
    cls.resumed = _read_log(resumed_log)

  def test_process_was_killed_after_unsaved_steps(self):
    self.assertEqual(self.kill_status, -signal.SIGKILL)
    self.assertEqual([r["step"] for r in self.killed],
                     list(range(_HANG_AT_STEP + 1)))
    # The newest checkpoint is at step 10: steps 10-13 were lost.
    self.assertTrue(self.checkpoint_after_kill.endswith("model.ckpt-10"),
                    msg=self.checkpoint_after_kill)
    self.assertEqual(self.state_after_kill["global_step"], 10)

  def test_reference_run_follows_policy(self):
    self.assertEqual([r["step"] for r in self.reference],
                     list(range(_LAST_STEP)))
    flags = [r["finite"] for r in self.reference]
    self.assertEqual(flags, [s not in _POISON_STEPS for s in range(_LAST_STEP)])
    expected = policy_reference.exponential_policy(
        flags, init_loss_scale=2**10, incr_every_n_steps=4,
        decr_every_n_nan_or_inf=2, incr_ratio=2, decr_ratio=0.5)
    self.assertEqual(
        [(r["loss_scale"], r["good_steps"], r["bad_steps"])
         for r in self.reference], expected)

  def test_checkpoint_holds_reference_state_at_that_step(self):
    saved = self.state_after_kill
    at_10 = self.reference[9]  # State after the step that ran at 9.
    self.assertEqual(at_10["global_step"], 10)
    self.assertEqual(float(saved["loss_scale"]), at_10["loss_scale"])
    self.assertEqual(saved["loss_scale"].dtype, np.float32)
    self.assertEqual(int(saved["good_steps"]), at_10["good_steps"])
    self.assertEqual(int(saved["bad_steps"]), at_10["bad_steps"])
    # A non-trivial state to carry over: a lone bad step is pending.
    self.assertEqual(int(saved["bad_steps"]), 1)
    self.assertAllEqual(saved["w"].ravel(), at_10["weights"][0])
    self.assertAllEqual(saved["b"].ravel(), at_10["weights"][1])

  def test_resumed_run_continues_exactly_from_checkpoint(self):
    self.assertEqual([r["step"] for r in self.resumed],
                     list(range(10, _LAST_STEP)))
    for resumed, reference in zip(self.resumed, self.reference[10:]):
      for key in ("step", "finite", "loss_scale", "good_steps", "bad_steps",
                  "global_step"):
        self.assertEqual(resumed[key], reference[key], msg=key)
      if reference["finite"]:
        self.assertAllClose(resumed["loss"], reference["loss"], rtol=1e-6)
      for got, want in zip(resumed["weights"], reference["weights"]):
        self.assertAllClose(got, want, rtol=1e-6, atol=1e-7)

  def test_lost_steps_are_redone_once(self):
    # The killed run had done 10-13; the restart did them again from the
    # checkpoint, with the same results, and the step count is not inflated.
    for killed, resumed in zip(self.killed[10:], self.resumed[:4]):
      self.assertEqual(killed["step"], resumed["step"])
      self.assertEqual(killed["loss_scale"], resumed["loss_scale"])
      self.assertEqual(killed["good_steps"], resumed["good_steps"])
      self.assertEqual(killed["global_step"], resumed["global_step"])
    self.assertEqual(self.resumed[-1]["global_step"], _LAST_STEP)

  def test_final_checkpoint_equals_reference(self):
    reference = _checkpoint_values(
        tf.train.latest_checkpoint(self.reference_dir))
    resumed = _checkpoint_values(tf.train.latest_checkpoint(self.resumed_dir))
    self.assertEqual(sorted(resumed), sorted(reference))
    # The loss-scale state, Adam's slots and beta powers, all of it.
    for name in ("loss_scale", "good_steps", "bad_steps", "global_step",
                 "w/Adam", "w/Adam_1", "cond/beta1_power",
                 "cond/beta2_power"):
      self.assertIn(name, reference)
    self.assertEqual(int(resumed["global_step"]), _LAST_STEP)
    for name in reference:
      if reference[name].dtype.kind in "iu" or name == "loss_scale":
        self.assertAllEqual(resumed[name], reference[name], msg=name)
      else:
        self.assertAllClose(resumed[name], reference[name], rtol=1e-6,
                            atol=1e-7, msg=name)


if __name__ == "__main__":
  tf.test.main()
