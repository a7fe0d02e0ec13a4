# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Pins the public API: names, module paths and the version."""

import os
import re

import tensorflow as tf

import contrib_mixed_precision as mp
from contrib_mixed_precision import version

EXPECTED_ALL = [
    "ExponentialUpdateLossScale",
    "ExponentialUpdateLossScaleManager",
    "FixedLossScaleManager",
    "GraphKeys",
    "KerasLossScaleOptimizer",
    "LossScaleHook",
    "LossScaleManager",
    "LossScaleOptimizer",
    "LossScaleStuckError",
    "__version__",
    "install_alias",
]


class ApiTest(tf.test.TestCase):

  def test_all_is_pinned(self):
    self.assertEqual(sorted(mp.__all__), EXPECTED_ALL)
    for name in mp.__all__:
      self.assertTrue(hasattr(mp, name), name)

  def test_no_other_public_names(self):
    public = {
        name for name in dir(mp)
        if not name.startswith("_") and not isinstance(
            getattr(mp, name), type(os))
    }
    self.assertEqual(public, set(EXPECTED_ALL) - {"__version__"})

  def test_version(self):
    self.assertEqual(mp.__version__, version.__version__)
    self.assertRegex(mp.__version__, r"^\d+\.\d+\.\d+$")

  def test_tf115_module_paths(self):
    # Legacy code imports these modules by path.
    from contrib_mixed_precision import loss_scale_manager  # pylint: disable=g-import-not-at-top
    from contrib_mixed_precision import loss_scale_optimizer  # pylint: disable=g-import-not-at-top
    self.assertIs(loss_scale_manager.LossScaleManager, mp.LossScaleManager)
    self.assertIs(loss_scale_manager.FixedLossScaleManager,
                  mp.FixedLossScaleManager)
    self.assertIs(loss_scale_manager.ExponentialUpdateLossScaleManager,
                  mp.ExponentialUpdateLossScaleManager)
    self.assertIs(loss_scale_optimizer.LossScaleOptimizer,
                  mp.LossScaleOptimizer)

  def test_importing_installs_no_alias(self):
    # The alias is opt-in: plain import never touches tf.contrib.
    import sys  # pylint: disable=g-import-not-at-top
    self.assertNotIn("tensorflow.contrib", sys.modules)
    self.assertFalse(hasattr(tf, "contrib"))

  def test_installed_from_wheel_when_run_by_run_tests(self):
    # scripts/run_tests.sh sets this: the suite must exercise the installed
    # wheel, never the source tree, so packaging mistakes fail.
    if os.environ.get("CMP_EXPECT_INSTALLED") != "1":
      self.skipTest("only meaningful under scripts/run_tests.sh")
    self.assertIn("site-packages", mp.__file__)

  def test_loss_scale_signatures_match_tf115(self):
    import inspect  # pylint: disable=g-import-not-at-top
    self.assertEqual(
        str(inspect.signature(mp.ExponentialUpdateLossScaleManager.__init__)),
        re.sub(r"\s+", " ", """(self, init_loss_scale: Union[int, float],
        incr_every_n_steps: int, decr_every_n_nan_or_inf: int = 2,
        incr_ratio: Union[int, float] = 2, decr_ratio: float = 0.8)"""))
    self.assertEqual(
        list(inspect.signature(mp.LossScaleOptimizer.__init__).parameters),
        ["self", "opt", "loss_scale_manager", "advance_global_step_on_skip",
         "xla_unscale", "keep_sparse_gradients"])
    self.assertEqual(
        list(inspect.signature(mp.FixedLossScaleManager.__init__).parameters),
        ["self", "loss_scale"])


if __name__ == "__main__":
  tf.test.main()
