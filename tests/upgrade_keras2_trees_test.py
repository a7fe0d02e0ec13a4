# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Fixture trees shaped like public TF 2.x trees: converted, run on Keras 3.

Each tree under tests/testdata/keras2_trees/ is a small program written for
these tests in the shape of a public tree (its README names which): the same
pin file, import styles, and split of the training step across functions
and modules, with a tiny model and synthetic data whose Inf and NaN batches
take the loss scale to its floor. Every step prints the loss scale,
`iterations` and the weights as exact hex floats.

The judge is the unmodified tree under tf-keras (TF_USE_LEGACY_KERAS=1),
which runs TF 2.4-2.15's Keras 2 code on today's TensorFlow (docs/design.md,
contract 17). `contrib-mp-upgrade` converts the tree in a subprocess with its
default flags, as a user runs it; where the report says a line needs a
person, the test applies the report's fix as written; the converted tree
then runs under Keras 3 and must print the same lines, bit for bit.

One subprocess per tree and Keras: the time goes to TensorFlow's start-up.
"""

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import tensorflow as tf

import upgrade_fixture_util as util

_TREES = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "testdata", "keras2_trees")
_EFFDET = ("efficientdet_tf2", ["-m", "tf2.train"],
           ["hand_wrapped", "compile_wraps"])
_BERT = ("model_garden_bert", ["-m", "official.nlp.bert.run_classifier"],
         ["dynamic", "fixed"])
_BARLOW = ("barlow_twins", ["train.py"], ["sgd", "--mixed-precision"])


def _keras3_env():
  return dict(util.package_env(), TF_USE_LEGACY_KERAS="0")


def _steps(tree, module, cases, env):
  """{case: [step record, ...]} printed by `tree`'s program."""
  proc = util.run_python(module + cases, cwd=tree, env=env)
  if proc.returncode != 0:
    raise AssertionError("{} failed (exit {}):\n{}\n{}".format(
        tree, proc.returncode, proc.stdout[-3000:], proc.stderr[-6000:]))
  found = {}
  for line in proc.stdout.splitlines():
    if line.startswith("{"):
      record = json.loads(line)
      found.setdefault(record["case"], []).append(record)
  return found


def _convert(name, tmp):
  """Converts fixture tree `name` as a user does; (outtree, report text)."""
  intree = util.real_tree(os.path.join(_TREES, name))
  outtree = os.path.join(tmp, name)
  report = os.path.join(tmp, name + "_report.txt")
  proc = subprocess.run(
      [sys.executable, "-m", "contrib_mp_upgrade", "--intree", intree,
       "--outtree", outtree, "--reportfile", report],
      env=util.package_env(), capture_output=True, text=True, timeout=300,
      check=False)
  if proc.returncode != 0:
    raise AssertionError("contrib-mp-upgrade failed on {}:\n{}\n{}".format(
        name, proc.stdout, proc.stderr))
  return intree, outtree, util.read_text(report)


def _scales(records):
  return [float.fromhex(r["scale"]) for r in records]


@unittest.skipIf(tf.__version__ < "2.16",
                 "Keras 3 is TensorFlow's Keras from 2.16 on")
class Keras2TreesTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.tmp = tempfile.mkdtemp(prefix="upgrade_keras2_trees_test_")
    cls.reference, cls.converted, cls.reports, cls.outtrees = {}, {}, {}, {}
    for name, module, cases in (_EFFDET, _BERT, _BARLOW):
      intree, outtree, report = _convert(name, cls.tmp)
      cls.reports[name], cls.outtrees[name] = report, outtree
      cls.reference[name] = _steps(intree, module, cases,
                                   util.legacy_keras_env())
    # The BERT- and Barlow-Twins-style trees convert whole.
    for name, module, cases in (_BERT, _BARLOW):
      cls.converted[name] = _steps(cls.outtrees[name], module, cases,
                                   _keras3_env())
    # EfficientDet: a hand-wrapped optimizer converts; `compile` under the
    # policy, of an optimizer built in another module, is the line the
    # report hands to a person. Its fix is applied as written, to a copy.
    name, module, _ = _EFFDET
    cls.converted[name] = _steps(cls.outtrees[name], module,
                                 ["hand_wrapped"], _keras3_env())
    cls.advised = os.path.join(cls.tmp, "efficientdet_advised")
    shutil.copytree(cls.outtrees[name], cls.advised)
    cls._apply_compile_fix(cls.reports[name], cls.advised)
    cls.converted[name].update(_steps(cls.advised, module,
                                      ["compile_wraps"], _keras3_env()))

  @classmethod
  def _apply_compile_fix(cls, report, tree):
    """Passes the report's wrapper to the `compile` it names, as told."""
    found = re.search(
        r"NOT CONVERTED: a `compile` under a `mixed_float16` policy whose "
        r"optimizer this command cannot wrap \(it cannot see how `([^`]+)` "
        r"was built\)\..*?pass the optimizer `opt` to `compile` as `(opt if "
        r"isinstance\(opt, [^`]+\))`", report)
    if not found:
      raise AssertionError("The report names no compile fix:\n" + report)
    built, wrapper = found.groups()
    path = os.path.join(tree, "tf2", "train.py")
    source = util.read_text(path)
    call = "optimizer={})".format(built)
    if source.count(call) != 1:
      raise AssertionError("{!r} is not in {}".format(call, path))
    # `opt` is the optimizer `compile` was given, named where it is built.
    source = source.replace(call, "optimizer={})".format(
        wrapper.replace("isinstance(opt,", "isinstance(opt := {},".format(
            built), 1)))
    source = source.replace("import tensorflow as tf\n",
                            "import tensorflow as tf\n"
                            "import contrib_mixed_precision\n", 1)
    with open(path, "w", encoding="utf-8") as f:
      f.write(source)

  @classmethod
  def tearDownClass(cls):
    shutil.rmtree(cls.tmp, ignore_errors=True)
    super().tearDownClass()

  def _same_steps(self, name, cases):
    """The converted tree printed the reference's records, bit for bit."""
    for case in cases:
      with self.subTest(tree=name, case=case):
        reference = self.reference[name][case]
        self.assertGreater(len(reference), 5)
        self.assertEqual(self.converted[name][case], reference)

  def test_references_reach_the_floor_over_skipped_steps(self):
    # The judge is not vacuous: Keras 2 halves to its floor of 1 and stays
    # there, counting every step, skipped or not, in `iterations`.
    for name, case in (("efficientdet_tf2", "hand_wrapped"),
                       ("efficientdet_tf2", "compile_wraps"),
                       ("model_garden_bert", "dynamic"),
                       ("barlow_twins", "sgd")):
      with self.subTest(tree=name, case=case):
        records = self.reference[name][case]
        scales = _scales(records)
        self.assertEqual(scales[-4:], [1.] * 4)
        self.assertTrue(any(b < a for a, b in zip(scales, scales[1:])))
        self.assertEqual([r["iterations"] for r in records],
                         list(range(1, len(records) + 1)))
        # Some steps left the weights alone (skipped), others moved them.
        pairs = list(zip(records, records[1:]))
        self.assertTrue(any(a["weights"] == b["weights"] for a, b in pairs))
        self.assertTrue(any(a["weights"] != b["weights"] for a, b in pairs))
    fixed = self.reference["model_garden_bert"]["fixed"]
    self.assertEqual(set(_scales(fixed)), {128.})
    self.assertEqual(fixed[-1]["weights"], ["nan"] * 3)

  def test_efficientdet_hand_wrapped_optimizer_in_train_step(self):
    # tf2/train_lib.py: `LossScaleOptimizer(opt, initial_scale=...)` built
    # for `compile`, scaled and unscaled in the model's own `train_step`.
    source = util.read_text(os.path.join(
        self.outtrees["efficientdet_tf2"], "tf2", "train_lib.py"))
    self.assertIn("contrib_mixed_precision.KerasLossScaleOptimizer(", source)
    self._same_steps("efficientdet_tf2", ["hand_wrapped"])

  def test_efficientdet_compile_under_the_policy_after_the_fix(self):
    self._same_steps("efficientdet_tf2", ["compile_wraps"])

  def test_efficientdet_report(self):
    report = self.reports["efficientdet_tf2"]
    self.assertIn("requirements.txt:3 `tensorflow>=2.10.0,<2.16.0`", report)
    self.assertIn("tf2/train.py:45: NOT CONVERTED: a `compile` under a "
                  "`mixed_float16` policy", report)
    self.assertIn("3 of 4 Python files will run", report)
    self.assertIn("do not run it", report)

  def test_bert_custom_loop_in_strategy_run(self):
    # official/modeling/performance.py: dynamic and `dynamic=False`;
    # the step runs in `strategy.run` inside a `tf.function` over tf.range.
    source = util.read_text(os.path.join(
        self.outtrees["model_garden_bert"], "official", "modeling",
        "performance.py"))
    self.assertIn("tf.compat.v1.mixed_precision.FixedLossScale(loss_scale)",
                  source)
    self._same_steps("model_garden_bert", ["dynamic", "fixed"])

  def test_bert_report(self):
    report = self.reports["model_garden_bert"]
    self.assertIn("no TensorFlow pin found", report)
    self.assertIn("7 of 7 Python files will run", report)

  def test_barlow_twins_step_function_given_the_optimizer(self):
    # train.py wraps by hand; barlow_twins/training.py's `tf.function`
    # takes the optimizer as an argument, inside `MirroredStrategy.run`
    # in another `tf.function`.
    source = util.read_text(os.path.join(self.outtrees["barlow_twins"],
                                         "train.py"))
    self.assertIn("contrib_mixed_precision.KerasLossScaleOptimizer(optimizer"
                  ", tf.compat.v1.mixed_precision.DynamicLossScale(", source)
    self._same_steps("barlow_twins", ["sgd"])
    self.assertEqual(
        [float.fromhex(r["lr"]) for r in self.converted["barlow_twins"]
         ["sgd"][:5]], [0.03125, 0.0625, 0.09375, 0.125, 0.125])

  def test_barlow_twins_report_reads_the_dockerfile(self):
    report = self.reports["barlow_twins"]
    self.assertIn("TensorFlow pinned by the tree: Dockerfile:1", report)
    # train.py builds `Adam(..., decay=1.5e-6)`: Keras 3 ignores `decay=`.
    self.assertIn("4 of 5 Python files will run", report)
    self.assertIn("`decay=` of a `tf.keras.optimizers.X`", report)


# The TF 2.0-2.3 trees (the experimental Policy API): their TensorFlow is
# gone, so the judge of the scale and `iterations` is TF's own
# `DynamicLossScale`, TF 2.0's class, driven with the steps' finite or
# non-finite inputs; TF 2.0-2.2 counted only applied steps (neither tree
# pins TensorFlow, so the command keeps that rule). One process per Keras
# runs the MRI package's two training scripts and the notebook's cells.
_TF20_DRIVER = """
import os, runpy, sys
mri, notebook = sys.argv[1:3]
sys.path.insert(0, mri)
os.chdir(mri)
for script in ("train_segmentation.py", "train_reconstruction.py"):
  runpy.run_path(script, run_name="__main__")
os.chdir(os.path.dirname(notebook))
runpy.run_path(notebook, run_name="__main__")
"""


def _notebook_program(path, out):
  """The notebook's code cells as one program; IPython lines become pass."""
  with open(path, encoding="utf-8") as f:
    notebook = json.load(f)
  lines = []
  for cell in notebook["cells"]:
    if cell["cell_type"] == "code":
      lines += ["pass" if line.startswith(("!", "%")) else line
                for line in "".join(cell["source"]).split("\n")]
  with open(out, "w", encoding="utf-8") as f:
    f.write("\n".join(lines) + "\n")


def _tf20_reference(inputs):
  """TF 2.0's scale and applied-step count after each step."""
  loss_scale = tf.compat.v1.mixed_precision.DynamicLossScale()
  applied, rows = 0, []
  for row in inputs:
    finite = bool(np.all(np.isfinite(row)))
    loss_scale.update([tf.constant(1. if finite else float("nan"))])
    applied += finite
    rows.append((float(loss_scale()), applied))
  return rows


@unittest.skipIf(tf.__version__ < "2.16",
                 "Keras 3 is TensorFlow's Keras from 2.16 on")
class Tf20TreesTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.tmp = tempfile.mkdtemp(prefix="upgrade_keras2_trees_test_tf20_")
    _, cls.mri, cls.mri_report = _convert("mri_package", cls.tmp)
    _, cls.nb_tree, cls.nb_report = _convert("mp_notebook", cls.tmp)
    # compile.py builds its optimizer from `policy.loss_scale`, which no
    # Keras has; the command writes what TF 2.1-2.3's global
    # `mixed_float16` policy held. The test runs its output as it is.
    program = os.path.join(cls.nb_tree, "notebook_program.py")
    _notebook_program(os.path.join(cls.nb_tree, "mixed_precision_demo.ipynb"),
                      program)
    cls.found = {}
    for keras, env in (("keras3", _keras3_env()),
                       ("tf_keras", util.legacy_keras_env())):
      cls.found[keras] = _steps(cls.tmp, ["-c", _TF20_DRIVER],
                                [cls.mri, program], env)
    spec = importlib.util.spec_from_file_location(
        "mri_data", os.path.join(cls.mri, "mrinet", "data.py"))
    data = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(data)
    cls.inputs = {"segmentation": data.SLICES, "reconstruction": data.SLICES}

  @classmethod
  def tearDownClass(cls):
    shutil.rmtree(cls.tmp, ignore_errors=True)
    super().tearDownClass()

  def _judge(self, case, inputs):
    want = _tf20_reference(inputs)
    self.assertEqual(want[-1][0], 1.)
    for keras, found in self.found.items():
      with self.subTest(case=case, keras=keras):
        records = found[case]
        self.assertEqual([(float.fromhex(r["scale"]), r["iterations"])
                          for r in records], want)
        # A skipped step leaves the weights alone; an applied one moves.
        for before, after, row in zip(records, records[1:], inputs[1:]):
          moved = before["weights"] != after["weights"]
          self.assertEqual(moved, bool(np.all(np.isfinite(row))))
    # Both Kerases train the converted program to the same weights.
    self.assertEqual(self.found["keras3"][case], self.found["tf_keras"][case])

  def test_mri_package_compile_py_as_converted(self):
    self.assertIn("mrinet/compile.py\n", self.mri_report)
    self.assertIn("\n  12: `policy.loss_scale` -> `\"dynamic\"`\n",
                  self.mri_report)
    self.assertNotIn("NOT CONVERTED", self.mri_report)
    source = util.read_text(os.path.join(self.mri, "mrinet", "compile.py"))
    self.assertIn("(policy.variable_dtype != policy.compute_dtype)", source)
    for case in ("segmentation", "reconstruction"):
      self._judge(case, self.inputs[case])

  def test_notebook_set_policy_string_and_compile(self):
    self.assertIn("cell 5, line 5: `model.compile(optimizer=tf.keras."
                  "optimizers.SGD(0.125, momentum=0.5), loss='mse')` -> "
                  "`model.compile(optimizer=contrib_mixed_precision."
                  "KerasLossScaleOptimizer(", self.nb_report)
    # The policy the note names is where the notebook's reader finds it.
    self.assertIn("under the `mixed_float16` policy set at cell 3, line 1;",
                  self.nb_report)
    inf, nan = float("inf"), float("nan")
    inputs = ([[.25, .5], [inf, .25], [.125, .25]] + [[nan, .25]] * 8
              + [[inf, .5]] * 9 + [[.25, .25], [.5, .25]])
    self._judge("notebook", inputs)


if __name__ == "__main__":
  tf.test.main()
