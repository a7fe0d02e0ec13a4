# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""What the report says stops a file on TF 2 (`contrib_mp_upgrade.blockers`).

In-process, on sources written here: no TensorFlow.
"""

from absl.testing import absltest

from contrib_mp_upgrade import blockers


class OtherContribTest(absltest.TestCase):

  def _modules(self, source):
    return [b.what for b in blockers.find(source.encode())]

  def test_another_packages_contrib_is_not_tensorflows(self):
    # TensorFlowTTS: `pypinyin.contrib` is pypinyin's, not `tf.contrib`.
    for source in (
        "from pypinyin.contrib.neutral_tone import NeutralToneWith5Mixin\n"
        "import tensorflow as tf\n",
        "import pypinyin.contrib.neutral_tone as nt\nimport tensorflow as tf\n",
        "import tensorflow as tf\nfrom foo.contrib import bar\n"):
      with self.subTest(source=source):
        self.assertNotIn("tf.contrib.neutral_tone", self._modules(source))
        self.assertEqual([], [m for m in self._modules(source)
                              if m.startswith("tf.contrib.")])

  def test_tensorflows_contrib_is_still_reported(self):
    for source in (
        "from tensorflow.contrib.layers import fully_connected\n",
        "import tensorflow.contrib.layers as layers\n",
        "from tensorflow.compat.v1.contrib import layers\n",
        "import tensorflow as tf\nx = tf.contrib.layers.flatten\n"):
      with self.subTest(source=source):
        self.assertIn("tf.contrib.layers", self._modules(source))


if __name__ == "__main__":
  absltest.main()


class OptimizerV2SubclassTest(absltest.TestCase):
  """BERT-style AdamWeightDecay on today's `tf.keras.optimizers.Adam`."""

  _BODY = (
      "  def _resource_apply_dense(self, grad, var, apply_state=None):\n"
      "    return super()._resource_apply_dense(grad, var, apply_state)\n")

  def _found(self, source):
    return {b.what: b for b in blockers.find(source.encode())}

  def test_flagged_with_the_legacy_fix(self):
    for header in (
        "import tensorflow as tf\n"
        "class AdamWeightDecay(tf.keras.optimizers.Adam):\n",
        "from tensorflow.keras.optimizers import Adam\n"
        "class AdamWeightDecay(Adam):\n",
        "from tensorflow import keras\n"
        "class AdamWeightDecay(keras.optimizers.Optimizer):\n",
        "import tensorflow.compat.v2 as tf\n"
        "class AdamWeightDecay(tf.keras.optimizers.Adam):\n"):
      with self.subTest(header=header):
        found = self._found(header + self._BODY)
        blocker = found[blockers.OPTIMIZER_V2_SUBCLASS]
        self.assertEqual((2,), blocker.lines)
        self.assertIn("tf.keras.optimizers.legacy.X", blocker.fix)
        self.assertIn("update_step", blocker.fix)

  def test_legacy_base_or_no_hook_is_not_flagged(self):
    for source in (
        "import tensorflow as tf\n"
        "class A(tf.keras.optimizers.legacy.Adam):\n" + self._BODY,
        "import tensorflow as tf\n"
        "class A(tf.keras.optimizers.Adam):\n"
        "  def update_step(self, gradient, variable):\n    pass\n",
        "import foo\nclass A(foo.optimizers.Adam):\n" + self._BODY):
      with self.subTest(source=source):
        self.assertNotIn(blockers.OPTIMIZER_V2_SUBCLASS, self._found(source))
