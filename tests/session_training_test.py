# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""End to end: an NVIDIA-BERT-like TF1 `Session` program trains.

`tests/programs/session_bert_like.py` runs in its own process (it calls
`disable_v2_behavior()`, which must not leak into other tests): float16
compute over float32 master weights, a loss scale starting at 2**32, clipping
between `compute_gradients` and `apply_gradients`, `global_step` incremented
by the program under its own finiteness cond, and a hook fetching
`'loss_scale:0'` by name. The expected trajectory comes from
`policy_reference.exponential_policy`, a pure-Python model of TF 1.15's
policy, fed with the finite flags the program observed; and the program
trains the same model with TF 1.15's optimizer (`tf115_harness`), whose
weights, scale, counters and `global_step` after every step must be the
package's, to the bit.
"""

import json
import os
import tempfile

import tensorflow as tf

import policy_reference
import program_util

_STEPS = 70
_POISON_STEPS = (55, 60)


class SessionTrainingTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    out_dir = tempfile.mkdtemp()
    out = os.path.join(out_dir, "session.json")
    program_util.run_program(
        "session_bert_like.py", "--out", out, "--steps", str(_STEPS),
        "--poison-steps", ",".join(str(s) for s in _POISON_STEPS))
    with open(out) as f:
      cls.result = json.load(f)
    cls.records = cls.result["records"]

  def test_state_is_ref_variables_with_tf115_names(self):
    self.assertEqual(self.result["variable_kinds"], ["RefVariable"] * 3)
    self.assertEqual(self.result["variable_names"],
                     ["loss_scale:0", "good_steps:0", "bad_steps:0"])
    # The custom getter kept float32 master weights.
    self.assertEqual(set(self.result["master_dtypes"]), {"float32"})

  def test_first_steps_overflow_and_are_skipped(self):
    flags = [r["finite"] for r in self.records]
    first_finite = flags.index(True)
    # 2**32 overflows float16 gradients: at least the first two steps (one
    # halving) are skipped, and training starts only well below 2**32.
    self.assertGreaterEqual(first_finite, 2)
    self.assertLess(self.records[first_finite]["hook_loss_scale"], 2.0**24)
    for r in self.records[:first_finite]:
      self.assertEqual(r["global_step"], 0)
      self.assertEqual(r["weight_sum"], self.records[0]["weight_sum"])

  def test_scale_trajectory_matches_reference_policy(self):
    flags = [r["finite"] for r in self.records]
    expected = policy_reference.exponential_policy(
        flags, init_loss_scale=2**32, incr_every_n_steps=1000,
        decr_every_n_nan_or_inf=2, incr_ratio=2, decr_ratio=0.5)
    observed = [(r["loss_scale"], r["good_steps"], r["bad_steps"])
                for r in self.records]
    self.assertEqual(observed, expected)
    # The trajectory went through every branch of the policy: shrink on a
    # second bad step, and a lone bad step between good ones (55) that is
    # remembered until the next one (60) shrinks the scale.
    self.assertIn(2.0**31, [s for s, _, _ in observed])
    self.assertEqual(observed[55][2], 1)
    self.assertEqual(observed[59][2], 1)
    self.assertEqual(observed[60], (observed[59][0] / 2, 0, 0))

  def test_hook_fetches_loss_scale_by_name(self):
    previous = 2.0**32
    for r in self.records:
      # A ref variable fetched in the same run as its update may show the
      # value before or after it; either is this step's scale.
      self.assertIn(r["hook_loss_scale"], (previous, r["loss_scale"]))
      previous = r["loss_scale"]

  def test_optimizer_decision_matches_program_check(self):
    for r in self.records:
      self.assertEqual(r["finite"], r["all_are_finite"], msg=r)
    for step in _POISON_STEPS:
      self.assertFalse(self.records[step]["finite"])

  def test_skipped_steps_change_nothing_and_global_step_counts_applied(self):
    previous_sum, previous_step = self.records[0]["weight_sum"], 0
    for r in self.records:
      if r["finite"]:
        self.assertEqual(r["global_step"], previous_step + 1)
        self.assertNotEqual(r["weight_sum"], previous_sum)
      else:
        self.assertEqual(r["global_step"], previous_step)
        self.assertEqual(r["weight_sum"], previous_sum)
      self.assertEqual(r["step_update"], r["global_step"])
      previous_sum, previous_step = r["weight_sum"], r["global_step"]
    # Incremented once per applied step: never twice by optimizer and
    # program.
    self.assertEqual(self.records[-1]["global_step"],
                     sum(r["finite"] for r in self.records))

  def test_every_step_is_tf115s(self):
    states, tf115 = self.result["states"], self.result["tf115_states"]
    self.assertLen(states, _STEPS)
    self.assertLen(tf115, _STEPS)
    for step, (got, want) in enumerate(zip(states, tf115)):
      self.assertEqual(got, want, msg="step {}".format(step))

  def test_loss_falls(self):
    losses = [r["total_loss"] for r in self.records if r["finite"]]
    self.assertGreaterEqual(len(losses), 30)
    first, last = sum(losses[:5]) / 5, sum(losses[-5:]) / 5
    self.assertLess(last, 0.6 * first, msg=losses)


if __name__ == "__main__":
  tf.test.main()
