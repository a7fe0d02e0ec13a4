# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Which TensorFlow a tree pins (`contrib_mp_upgrade.pins`), and the rule.

In-process, on small trees written here: no TensorFlow. Each kind of file
that pins TensorFlow, a pin on each side of TF 2.3 (where skipped steps
began to advance `iterations`: docs/design.md, contract 16), pins that
allow both, and trees with no pin. tests/upgrade_tf2x_test.py runs a
converted program from a tree pinned to TF 2.4.
"""

import os
import shutil
import tempfile

from absl.testing import absltest
from absl.testing import parameterized

from contrib_mp_upgrade import pins


def _tree(files):
  root = tempfile.mkdtemp(prefix="pins_test_")
  for name, text in files.items():
    path = os.path.join(root, *name.split("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
      f.write(text)
  return root


class PinTest(parameterized.TestCase):

  def find(self, files, **kwargs):
    root = _tree(files)
    self.addCleanup(shutil.rmtree, root, ignore_errors=True)
    return pins.find(root, **kwargs)

  @parameterized.named_parameters(
      ("requirements", "requirements.txt",
       "numpy>=1.19\ntensorflow-gpu==2.4.1\n", 2, "tensorflow-gpu==2.4.1"),
      ("requirements_variant", "requirements-gpu.txt",
       "tensorflow==2.6.*  # CUDA 11.2\n", 1, "tensorflow==2.6.*"),
      # `*requirements*.txt`: a prefix too, not only `requirements*`.
      ("requirements_prefixed", "dev-requirements.txt",
       "pytest\ntensorflow==2.4.0\n", 2, "tensorflow==2.4.0"),
      ("requirements_dir", "requirements/base.txt",
       "tensorflow>=2.3.0\n", 1, "tensorflow>=2.3.0"),
      ("setup_py", "setup.py",
       "from setuptools import setup\nsetup(\n    name='x',\n"
       "    install_requires=['numpy', 'tensorflow~=2.5.0'],\n)\n", 4,
       "tensorflow~=2.5.0"),
      ("setup_cfg", "setup.cfg",
       "[options]\ninstall_requires =\n    tensorflow >= 2.4, < 2.9\n", 3,
       "tensorflow >= 2.4, < 2.9"),
      ("pyproject", "pyproject.toml",
       "[project]\nname = 'x'\ndependencies = [\n  \"tensorflow>=2.5\",\n]\n",
       4, "tensorflow>=2.5"),
      ("poetry", "pyproject.toml",
       "[tool.poetry.dependencies]\npython = \"^3.8\"\n"
       "tensorflow = \"^2.4\"\n", 3, "tensorflow = \"^2.4\""),
      ("dockerfile_image", "Dockerfile",
       "FROM tensorflow/tensorflow:2.4.1-gpu\nRUN pip install absl-py\n", 1,
       "tensorflow/tensorflow:2.4"),
      ("dockerfile_pip", "docker/Dockerfile.train",
       "FROM nvidia/cuda:11.0-base\nRUN pip install tensorflow==2.3.1\n", 2,
       "tensorflow==2.3.1"),
      ("environment_yml", "environment.yml",
       "name: x\ndependencies:\n  - python=3.8\n  - tensorflow=2.4\n", 4,
       "tensorflow=2.4"),
  )
  def test_a_pin_of_tf_2_3_or_later_advances_iterations(self, name, text,
                                                        line, pinned):
    pin = self.find({name: text, "train.py": "import tensorflow as tf\n"})
    self.assertEqual(len(pin.found), 1, pin.found)
    self.assertEqual((pin.found[0].path, pin.found[0].line,
                      pin.found[0].text), (name, line, pinned))
    self.assertIs(pin.advance, True)
    # The report names the file it read and the rule chosen.
    self.assertIn("{}:{} `{}`".format(name, line, pinned), pin.describe())
    self.assertIn("skipped steps advance `iterations`", pin.describe())

  @parameterized.named_parameters(
      ("exact", "requirements.txt", "tensorflow==2.2.0\n"),
      ("below", "requirements.txt", "tensorflow-gpu<2.3\n"),
      ("compatible_patch", "setup.py",
       "install_requires=['tensorflow~=2.1.0']\n"),
      ("image", "Dockerfile", "FROM tensorflow/tensorflow:2.1.0-gpu-py3\n"),
      ("conda", "environment.yaml", "dependencies:\n  - tensorflow-gpu=2.0\n"),
  )
  def test_a_pin_of_tf_2_2_or_earlier_does_not(self, name, text):
    pin = self.find({name: text})
    self.assertIs(pin.advance, False, pin.found)
    self.assertIn("do not advance `iterations`", pin.describe())
    self.assertIn(name, pin.describe())

  @parameterized.named_parameters(
      ("open_range", {"requirements.txt": "tensorflow>=2.0\n"}),
      ("straddles", {"requirements.txt": "tensorflow>=2.1,<2.5\n"}),
      ("disagree", {"requirements.txt": "tensorflow==2.2\n",
                    "Dockerfile": "FROM tensorflow/tensorflow:2.4.0\n"}),
  )
  def test_pins_that_allow_both_rules_keep_the_default_and_say_so(
      self, files):
    pin = self.find(files)
    self.assertTrue(pin.found)
    self.assertIsNone(pin.advance)
    self.assertIn("allow both TF 2.0-2.2 and 2.3+", pin.describe())
    self.assertIn("keep TF 2.0-2.2's rule", pin.describe())

  @parameterized.named_parameters(
      ("empty", {"train.py": "import tensorflow as tf\n"}),
      ("other_packages", {
          "requirements.txt": "tensorflow-addons==0.12\n"
                              "tensorflow-datasets>=4\ntf-keras==2.15\n",
          "setup.py": "# tensorflow==2.4 in a comment is no pin\n"}),
      ("too_deep", {"a/b/c/d/requirements.txt": "tensorflow==2.4\n"}),
      ("in_a_venv", {".venv/lib/requirements.txt": "tensorflow==2.4\n"}),
  )
  def test_no_pin_keeps_the_default_and_says_nothing_was_found(self, files):
    pin = self.find(files)
    self.assertEqual(pin.found, [])
    self.assertIsNone(pin.advance)
    self.assertIn("no TensorFlow pin found (looked in requirements*.txt, "
                  "setup.py", pin.describe())
    self.assertIn("keep TF 2.0-2.2's rule", pin.describe())
    # TF 2.4-2.15's Keras 2 class is converted with TF 2.3+'s rule whatever
    # the pin: the header must not say otherwise (the report is a promise).
    self.assertIn("TF 2.4-2.15's Keras 2 `LossScaleOptimizer` calls "
                  "advance `iterations`", pin.describe())

  def test_an_unversioned_requirement_is_named(self):
    pin = self.find({"requirements.txt": "numpy\ntensorflow\n"})
    self.assertEqual(pin.found, [])
    self.assertIn("TensorFlow required without a version "
                  "(requirements.txt:2)", pin.describe())

  def test_a_single_file_reads_its_directory_and_those_above(self):
    root = _tree({"repo/.git/HEAD": "ref\n",
                  "repo/requirements.txt": "tensorflow==2.5.0\n",
                  "repo/src/model/train.py": "import tensorflow\n",
                  "requirements.txt": "tensorflow==2.1.0\n"})
    self.addCleanup(shutil.rmtree, root, ignore_errors=True)
    pin = pins.find(None, single_file=os.path.join(
        root, "repo", "src", "model", "train.py"))
    # Up to the repository's root, not beyond it.
    self.assertEqual([(f.path, f.text) for f in pin.found],
                     [("../../requirements.txt", "tensorflow==2.5.0")])
    self.assertIs(pin.advance, True)


if __name__ == "__main__":
  absltest.main()
