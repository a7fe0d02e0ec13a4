# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Keras 2 `fit` with the contrib optimizer: it scales, or it says so.

Runs tests/programs/keras_fit.py, a float16 model whose gradients underflow
unless the loss is scaled, in a subprocess per mode (Keras and the eager /
graph switch are process-global). In graph mode Keras calls
`compute_gradients`, so the loss is scaled: the weights must follow a
float32 computation and the scale the contrib policy, and both must be what
TF 1.15's optimizer (`tf115_harness`), fitted the same way in the same
program, makes of them, to the bit. In eager mode and in
`fit`'s tf.function Keras differentiates the unscaled loss itself, so `fit`
must fail on its first step and name what to use instead (contract 12).
"""

import json

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

import policy_reference
import program_util


def _run(mode):
  output = program_util.run_program("keras_fit.py", mode, timeout=240)
  return json.loads(output.strip().splitlines()[-1])


def _expected():
  """Scales and weight after each batch, in NumPy float64.

  The program's data: 6 batches of 4 samples, x = y = 1e-4, a NaN in batch
  2, plain SGD with learning rate 1e4, and an exponential manager starting at
  2**15, growing x2 every 2 finite steps and halving on each NaN step.
  """
  flags = [True, True, False, True, True, True]
  scales = [s for s, _, _ in policy_reference.exponential_policy(
      flags, 2.0**15, 2, 1, 2.0, 0.5)]
  weights, w = [], 1.0
  for finite in flags:
    if finite:
      w -= 1e4 * np.float64(np.float32(1e-4))**2  # d(mean(y * w * x))/dw
    weights.append(w)
  return scales, weights


class KerasFitTest(tf.test.TestCase, parameterized.TestCase):

  def test_graph_mode_fit_scales_like_float32(self):
    result = _run("graph")
    self.assertTrue(result["ok"], result.get("error"))
    scales, weights = _expected()
    self.assertEqual(scales, result["scales"])
    # Each applied step moves `w` by 1e-4; unscaled float16 gradients would
    # leave it at exactly 1.0. The tolerance is float16 rounding of x and y.
    self.assertAllClose(weights, result["weights"], rtol=0, atol=1e-6)
    self.assertLess(result["weights"][-1], 1.0 - 4e-4)
    # TF 1.15's optimizer, fitted the same way: the same floats.
    self.assertEqual(result["tf115"], {"scales": result["scales"],
                                       "weights": result["weights"]})

  @parameterized.parameters("function", "eager")
  def test_eager_fit_refuses_on_first_step(self, mode):
    result = _run(mode)
    self.assertFalse(
        result["ok"],
        "fit trained without loss scaling: weights {}".format(
            result.get("weights")))
    self.assertIn("LossScaleOptimizer", result["error"])
    self.assertIn("disable_eager_execution()", result["error"])
    self.assertIn("contrib_mixed_precision.KerasLossScaleOptimizer(opt, "
                  "manager)", result["error"])


if __name__ == "__main__":
  tf.test.main()
