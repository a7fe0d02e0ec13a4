# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Runs `scripts/train_mixed_precision.py`; checks what it and the docs claim.

`DemoTest` runs `--fast` (600 steps) on every TF it runs on; `QuickStartTest`
runs the README's quick-start command as it is (3000 steps) where that takes
seconds, not minutes. The figures docs/observability.md and the README quote
are compared with these runs, so that a change to the demo, the package or
TensorFlow that moves them fails here, not in a reader's hands.
"""

import glob
import json
import os
import re
import subprocess
import sys
import unittest

from absl.testing import parameterized
import tensorflow as tf

from contrib_mixed_precision import hooks
import program_util

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SCRIPT = os.path.join(_REPO, "scripts", "train_mixed_precision.py")

# The claims, as tolerances on the final float32 eval loss (relative to the
# targets' variance). In --fast mode the measured ratios to float32 are about
# 1.00 (fixed), 1.01 (exponential) and 1.9 (no scaling).
_SCALED_TOLERANCE = 0.05  # Scaled float16 within 5% of float32.
_UNSCALED_MIN_RATIO = 1.3  # Unscaled float16 at least 30% worse.

_LABELS = ("float32", "float16, no loss scaling",
           "float16, FixedLossScaleManager",
           "float16, ExponentialUpdateLossScaleManager")
_OBSERVABILITY = os.path.join(_REPO, "docs", "observability.md")
_README = os.path.join(_REPO, "README.md")
_ROW = re.compile(r"^(?P<label>float\S*(?:, [A-Za-z ]+)?)\s+"
                  r"(?P<loss>[0-9.e+-]+)\s+(?P<ratio>[0-9.]+)x\s+"
                  r"(?P<skipped>\d+|-)\s+(?P<scale>[0-9.e+]+|-)$")


def _tf_minor():
  return ".".join(tf.__version__.split(".")[:2])


def _doc_table(name):
  """The rows of the Markdown table below `<!-- demo-table: name -->`.

  Returns:
    A list of rows, each a list of its cells' text (the header and the
    `|---|` line left out).
  """
  with open(_OBSERVABILITY, encoding="utf-8") as f:
    text = f.read()
  marker = "<!-- demo-table: {} -->".format(name)
  assert marker in text, "docs/observability.md has no " + marker
  lines = text.split(marker, 1)[1].strip().splitlines()
  rows = []
  for line in lines:
    if not line.startswith("|"):
      break
    rows.append([c.strip() for c in line.strip().strip("|").split("|")])
  return rows[2:]


def _run_demo(output_dir, *args):
  """Runs the demo script; returns (CompletedProcess, rows by label)."""
  # The script runs the installed package (issue 43): the one under test.
  env = dict(program_util.child_env(), TF_CPP_MIN_LOG_LEVEL="2")
  result = subprocess.run(
      [sys.executable, _SCRIPT, "--output_dir", output_dir] + list(args),
      env=env, capture_output=True, text=True, timeout=900, check=False)
  rows = {}
  for line in result.stdout.splitlines():
    match = _ROW.match(line.strip())
    if match:
      rows[match.group("label").strip()] = match.groupdict()
  return result, rows


class DemoTest(tf.test.TestCase, parameterized.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.output_dir = os.path.join(
        os.environ.get("TEST_TMPDIR") or tf.compat.v1.test.get_temp_dir(),
        "demo_output")
    cls.result, cls.rows = _run_demo(cls.output_dir, "--fast")

  def setUp(self):
    super().setUp()
    self.assertEqual(0, self.result.returncode, self.result.stderr[-3000:])

  def test_table_has_a_row_per_run(self):
    self.assertCountEqual(_LABELS, self.rows)
    self.assertEqual("-", self.rows["float32"]["skipped"])
    self.assertEqual("4096", self.rows["float16, FixedLossScaleManager"][
        "scale"])
    # The table agrees with results.json.
    with open(os.path.join(self.output_dir, "results.json")) as f:
      runs = json.load(f)["runs"]
    for run in runs:
      self.assertAllClose(run["final_eval_loss"],
                          float(self.rows[run["label"]]["loss"]), rtol=1e-3)

  def test_progress_lines_are_printed(self):
    self.assertRegex(self.result.stdout,
                     r"\[fp16_exponential\] step +600/600 +eval loss")

  @parameterized.parameters("float16, FixedLossScaleManager",
                            "float16, ExponentialUpdateLossScaleManager")
  def test_scaled_float16_matches_float32(self, label):
    fp32 = float(self.rows["float32"]["loss"])
    self.assertAllClose(fp32, float(self.rows[label]["loss"]),
                        rtol=_SCALED_TOLERANCE)

  def test_unscaled_float16_is_measurably_worse(self):
    fp32 = float(self.rows["float32"]["loss"])
    unscaled = float(self.rows["float16, no loss scaling"]["loss"])
    self.assertGreater(unscaled, _UNSCALED_MIN_RATIO * fp32)

  def test_png_is_a_valid_image(self):
    path = os.path.join(self.output_dir, "demo.png")
    with open(path, "rb") as f:
      self.assertEqual(b"\x89PNG\r\n\x1a\n", f.read(8))
    import matplotlib  # pylint: disable=g-import-not-at-top
    matplotlib.use("Agg")
    import matplotlib.image  # pylint: disable=g-import-not-at-top
    image = matplotlib.image.imread(path)
    self.assertEqual(3, image.ndim)
    self.assertGreater(image.shape[1], image.shape[0])  # Two panels, wide.

  def test_observability_md_quotes_this_run(self):
    quoted = {row[0]: row[1:] for row in _doc_table("fast")}
    if _tf_minor() not in quoted:
      self.skipTest("docs/observability.md quotes --fast figures for TF {} "
                    "only (the full suites' versions), not {}".format(
                        ", ".join(quoted), _tf_minor()))
    unscaled, fixed, exponential, skipped, scale = quoted[_tf_minor()]
    exp_row = self.rows["float16, ExponentialUpdateLossScaleManager"]
    self.assertEqual(
        [unscaled, fixed, exponential, skipped, scale],
        [self.rows["float16, no loss scaling"]["ratio"] + "x",
         self.rows["float16, FixedLossScaleManager"]["ratio"] + "x",
         exp_row["ratio"] + "x", exp_row["skipped"], exp_row["scale"]])

  @parameterized.parameters("fp16_fixed", "fp16_exponential")
  def test_event_files_hold_the_loss_scale(self, run):
    values = []
    for path in glob.glob(os.path.join(self.output_dir, "tensorboard", run,
                                       "events.out.tfevents*")):
      for event in tf.compat.v1.train.summary_iterator(path):
        values.extend(v.simple_value for v in event.summary.value
                      if v.tag == hooks.LOSS_SCALE_TAG)
    self.assertNotEmpty(values)
    if run == "fp16_fixed":
      self.assertEqual({4096.0}, set(values))


class QuickStartTest(tf.test.TestCase):
  """The README's quick-start run, and the figures quoted from it."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    if _tf_minor() == "2.15":
      raise unittest.SkipTest(
          "TF 2.15's float16 CPU kernels take about 5 minutes for the full "
          "demo; DemoTest checks its --fast run and figures instead")
    cls.output_dir = os.path.join(
        os.environ.get("TEST_TMPDIR") or tf.compat.v1.test.get_temp_dir(),
        "quick_start_output")
    cls.result, cls.rows = _run_demo(cls.output_dir)

  def setUp(self):
    super().setUp()
    self.assertEqual(0, self.result.returncode, self.result.stderr[-3000:])

  def test_observability_md_table_is_this_run(self):
    quoted = _doc_table("full")
    self.assertCountEqual(_LABELS, [row[0] for row in quoted])
    for label, loss, ratio, skipped, scale in quoted:
      row = self.rows[label]
      # The float16 losses can move in the fourth digit from run to run
      # (multi-threaded reductions), as the page says; nothing else may.
      self.assertAllClose(float(loss), float(row["loss"]), rtol=1e-3,
                          msg=label)
      self.assertEqual([ratio, skipped, scale],
                       [row["ratio"] + "x", row["skipped"], row["scale"]],
                       msg=label)

  def test_readme_sentence_is_this_run(self):
    with open(_README, encoding="utf-8") as f:
      readme = " ".join(f.read().split())
    match = re.search(r"stalls at (\d+)x the fp32 loss; both loss-scaled "
                      r"runs end within (\d+)% of fp32", readme)
    self.assertIsNotNone(match, "the README's demo sentence changed")
    ratio = lambda label: float(self.rows[label]["ratio"])
    self.assertEqual(int(match[1]),
                     round(ratio("float16, no loss scaling")))
    worst_scaled = max(ratio("float16, FixedLossScaleManager"),
                       ratio("float16, ExponentialUpdateLossScaleManager"))
    self.assertEqual(int(match[2]), round(100 * (worst_scaled - 1)))


if __name__ == "__main__":
  tf.test.main()
