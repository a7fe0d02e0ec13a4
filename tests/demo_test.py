# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Runs `scripts/train_mixed_precision.py --fast` and checks what it claims."""

import glob
import json
import os
import re
import subprocess
import sys

from absl.testing import parameterized
import tensorflow as tf

from contrib_mixed_precision import hooks

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
_ROW = re.compile(r"^(?P<label>float\S*(?:, [A-Za-z ]+)?)\s+"
                  r"(?P<loss>[0-9.e+-]+)\s+(?P<ratio>[0-9.]+)x\s+"
                  r"(?P<skipped>\d+|-)\s+(?P<scale>[0-9.e+]+|-)$")


class DemoTest(tf.test.TestCase, parameterized.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.output_dir = os.path.join(
        os.environ.get("TEST_TMPDIR") or tf.compat.v1.test.get_temp_dir(),
        "demo_output")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    # The script puts its own checkout first on sys.path.
    cls.result = subprocess.run(
        [sys.executable, _SCRIPT, "--fast", "--output_dir", cls.output_dir],
        env=env, capture_output=True, text=True, timeout=600, check=False)
    cls.rows = {}
    for line in cls.result.stdout.splitlines():
      match = _ROW.match(line.strip())
      if match:
        cls.rows[match.group("label").strip()] = match.groupdict()

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


if __name__ == "__main__":
  tf.test.main()
