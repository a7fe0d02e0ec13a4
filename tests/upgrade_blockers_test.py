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
