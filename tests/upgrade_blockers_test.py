# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""What the report says stops a file on TF 2 (`contrib_mp_upgrade.blockers`).

In-process, on sources written here: no TensorFlow, but for the test that
follows a fix's advice on the TensorFlow installed (in a subprocess).
"""

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

from absl.testing import absltest

from contrib_mp_upgrade import blockers
from contrib_mp_upgrade import cli

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _report_of(test, name, source):
  """The command's report on a tree of one file, `name`, run in-process."""
  tmp = tempfile.mkdtemp(prefix="upgrade_blockers_test_")
  test.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
  with open(os.path.join(tmp, name), "w") as f:
    f.write(source)
  report = os.path.join(tmp, "report.txt")
  out, err = io.StringIO(), io.StringIO()
  with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    status = cli.main(["--intree", tmp, "--inplace", "--reportfile", report])
  test.assertEqual(status, 0, err.getvalue())
  with open(report) as f:
    return f.read()


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

  def test_report_counts_it_as_needing_keras_2(self):
    # The command's report, as a user reads it: the "Keras 2" section names
    # the class's line, so the file is not left without a way to run.
    text = _report_of(self, "optimization.py",
                      "import tensorflow as tf\n"
                      "class AdamWeightDecay(tf.keras.optimizers.Adam):\n" +
                      self._BODY)
    self.assertIn("\nKeras 2\n", text)
    section = text.split("\nKeras 2\n", 1)[1].split("\n\n", 1)[0]
    self.assertIn("1 of 1 Python file uses Keras 2 API", section)
    self.assertIn("  optimization.py\n    2: a subclass of a Keras optimizer "
                  "that overrides OptimizerV2's hooks", section)

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


_WIDTH = "def width(x):\n  return x.shape[-1].value\n"
_TENSORSHAPE_SCRIPT = (
    "import tensorflow as tf\n"
    "tf.compat.v1.disable_v2_tensorshape()\n"
    + _WIDTH +
    "if __name__ == '__main__':\n"
    "  print(width(tf.ones([2, 3])))\n")


class V1ShapesSwitchTest(absltest.TestCase):
  """`disable_v2_tensorshape()` alone brings back `Dimension.value`.

  The report's "Before you run it" must not tell a program that already
  calls it to fix its `.value` uses: neither the entry script itself nor
  the modules it imports.
  """

  def _before_you_run(self, *args):
    proc = subprocess.run(
        [sys.executable, "-m", "contrib_mp_upgrade", "--dry_run"] +
        list(args), capture_output=True, text=True, timeout=120,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join(
            [_REPO] + [p for p in [os.environ.get("PYTHONPATH")] if p])))
    self.assertEqual(proc.returncode, 0, proc.stderr)
    start = proc.stdout.index("Before you run it\n")
    return proc.stdout[start:proc.stdout.index("\n\n", start)]

  def _tempdir(self):
    root = tempfile.mkdtemp(prefix="upgrade_blockers_test_")
    self.addCleanup(shutil.rmtree, root, ignore_errors=True)
    return root

  def _write(self, root, name, text):
    path = os.path.join(root, name)
    with open(path, "w") as f:
      f.write(text)
    return path

  def test_the_script_that_calls_it(self):
    root = self._tempdir()
    section = self._before_you_run(
        "--infile", self._write(root, "train.py", _TENSORSHAPE_SCRIPT))
    self.assertIn("1 of 1 Python file will run", section)
    self.assertNotIn(blockers.DIMENSION, section)
    # Without the call, the same script is stopped, and told why.
    section = self._before_you_run("--infile", self._write(
        root, "plain.py", _TENSORSHAPE_SCRIPT.replace(
            "tf.compat.v1.disable_v2_tensorshape()\n", "")))
    self.assertIn("0 of 1 Python file will run", section)
    self.assertIn(blockers.DIMENSION, section)

  def test_the_modules_of_a_script_that_calls_it(self):
    root = self._tempdir()
    self._write(root, "lib.py", _WIDTH)
    self._write(root, "main.py", "import tensorflow as tf\nimport lib\n"
                "tf.compat.v1.disable_v2_tensorshape()\n"
                "if __name__ == '__main__':\n"
                "  print(lib.width(tf.ones([2, 3])))\n")
    section = self._before_you_run("--intree", root)
    self.assertIn("2 of 2 Python files will run", section)
    self.assertNotIn(blockers.DIMENSION, section)

  def test_the_script_runs_on_tensorflow(self):
    # What the report's silence promises: `.value` works after the call.
    root = self._tempdir()
    proc = subprocess.run(
        [sys.executable, self._write(root, "train.py", _TENSORSHAPE_SCRIPT)],
        capture_output=True, text=True, timeout=300,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    self.assertEqual(proc.returncode, 0, proc.stderr)
    self.assertEqual(proc.stdout.splitlines()[-1], "3")


class AddonsTest(absltest.TestCase):
  """TensorFlow Addons, which no TensorFlow after 2.15 imports.

  An MRI reconstruction package's shared compile.py builds
  `tfa.optimizers.RectifiedAdam`; the report counted it as running.
  """

  def test_every_import_spelling_is_a_blocker(self):
    for source in (
        "import tensorflow_addons as tfa\n",
        "import tensorflow_addons.optimizers\n",
        "from tensorflow_addons import optimizers\n",
        "from tensorflow_addons.optimizers import RectifiedAdam\n",
        "import importlib\n"
        "tfa = importlib.import_module('tensorflow_addons')\n"):
      with self.subTest(source=source):
        found = {b.what: b for b in blockers.find(
            ("import tensorflow as tf\n" + source).encode())}
        self.assertIn(blockers.ADDONS, found)
        self.assertEqual(found[blockers.ADDONS].lines,
                         (1 + source.count("\n"),))
        self.assertIn("tensorflow-addons==0.23.0", found[blockers.ADDONS].fix)

  def test_other_names_are_not(self):
    for source in ("import tensorflow_addons_extra\n", "tfa = 1\n",
                   "# import tensorflow_addons\n",
                   "from mylib import tensorflow_addons\n"):
      with self.subTest(source=source):
        self.assertNotIn(blockers.ADDONS, [b.what for b in blockers.find(
            ("import tensorflow as tf\n" + source).encode())])

  def test_the_report_does_not_count_it_as_running(self):
    text = _report_of(self, "compile.py",
                      "import tensorflow as tf\n"
                      "import tensorflow_addons as tfa\n"
                      "def make(model):\n"
                      "  model.compile(optimizer=tfa.optimizers."
                      "RectifiedAdam(), loss='mse')\n")
    before = text.split("Before you run it\n", 1)[1].split("\n\n", 1)[0]
    self.assertIn("0 of 1 Python file will run", before)
    self.assertIn("  - {}: 1 file, 1 use (first: compile.py)".format(
        blockers.ADDONS), before)


class RemovedInternalModuleTest(absltest.TestCase):
  """ELECTRA's `from tensorflow.python.training import training_ops`."""

  _WHAT = "tensorflow.python.training.training_ops (removed in TF 2.16)"

  def _found(self, source):
    return {b.what: b for b in blockers.find(source.encode())}

  def test_flagged_with_the_raw_ops_fix(self):
    for source in (
        "from tensorflow.python.training import training_ops\n",
        "import tensorflow.python.training.training_ops as training_ops\n",
        "from tensorflow.python.training.training_ops import "
        "resource_apply_adam\n",
        "from tensorflow_core.python.training import training_ops\n",
        "import importlib\n"
        "ops = importlib.import_module("
        "'tensorflow.python.training.training_ops')\n"):
      with self.subTest(source=source):
        found = self._found("import tensorflow as tf\n" + source)
        self.assertIn(self._WHAT, found)
        self.assertIn("tf.raw_ops.ResourceApplyAdam(var=v, m=m, ...)",
                      found[self._WHAT].fix)

  def test_internal_modules_that_remain_are_not_flagged(self):
    for source in (
        "from tensorflow.python.keras.mixed_precision import policy\n",
        "from tensorflow.python.training.experimental import loss_scale\n",
        "from tensorflow.python.ops import gen_training_ops\n",
        "training_ops = 1\n"):
      with self.subTest(source=source):
        self.assertEqual(
            [], [w for w in self._found("import tensorflow as tf\n" + source)
                 if "removed in TF 2.16" in w])

  def test_the_advice_run_literally_gives_the_old_update(self):
    # The fix's own example, written out: `resource_apply_adam` as
    # `tf.raw_ops.ResourceApplyAdam` with keyword arguments. Where the old
    # module still imports (TF 2.15) both run and agree bit for bit; after,
    # the old import fails, as the report says.
    program = textwrap.dedent("""\
        import json
        import numpy as np
        import tensorflow as tf

        def step(apply):
          v = tf.Variable([1.0, -2.0, 3.5], dtype=tf.float32)
          m = tf.Variable([0.1, 0.2, -0.3], dtype=tf.float32)
          s = tf.Variable([0.01, 0.02, 0.03], dtype=tf.float32)
          g = tf.constant([0.5, -0.25, 1e-3], dtype=tf.float32)
          apply(v, m, s, g)
          return [x.numpy().view(np.uint32).tolist() for x in (v, m, s)]

        def new(v, m, s, g):
          tf.raw_ops.ResourceApplyAdam(
              var=v.handle, m=m.handle, v=s.handle, beta1_power=0.9,
              beta2_power=0.999, lr=0.01, beta1=0.9, beta2=0.999,
              epsilon=1e-7, grad=g)

        result = {"new": step(new)}
        try:
          from tensorflow.python.training import training_ops
        except ImportError as e:
          result["old"] = "ImportError"
        else:
          def old(v, m, s, g):
            training_ops.resource_apply_adam(
                v.handle, m.handle, s.handle, 0.9, 0.999, 0.01, 0.9, 0.999,
                1e-7, g)
          result["old"] = step(old)
        result["tf"] = tf.__version__
        print(json.dumps(result))
        """)
    proc = subprocess.run([sys.executable, "-c", program],
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    self.assertEqual(proc.returncode, 0, proc.stderr)
    result = json.loads(proc.stdout.splitlines()[-1])
    minor = tuple(int(x) for x in result["tf"].split(".")[:2])
    if minor >= (2, 16):
      self.assertEqual(result["old"], "ImportError")
    else:
      self.assertEqual(result["old"], result["new"])
    # The update happened: the first weight (1.0, bits 0x3f800000) moved.
    self.assertNotEqual(result["new"][0][0], 0x3F800000)


if __name__ == "__main__":
  absltest.main()
