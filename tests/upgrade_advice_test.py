# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The upgrade report's counts and advice, checked by following the advice.

Each test runs the real command (`python -m contrib_mp_upgrade`) in a child
process over a small TF 1.15 program written here, reads what the report
says to do, does exactly that to the converted file, and runs it with this
environment's Python. It runs under TF 2.15 and under TF 2.21 (the tf215
and tf221 environments), and expects the same converted bytes from both.
Issue 30's findings covered: 6 (`FileCountsTest`), 7 (`CausesTest`), 9
(`SummaryTest`), 10 (`TpuTest`), 11 (`EstimatorTest`), 12 (`FlagsTest`), 13
(`SlimUtilsTest`) and 14 (`DimensionTest`).
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from packaging import version as packaging_version
import tensorflow as tf

from contrib_mixed_precision import version
import upgrade_fixture_util as util

_TF = tuple(int(p) for p in tf.__version__.split(".")[:2])
# TF 2.16 removed Estimator (`tf.estimator`, `tf.compat.v1.estimator`).
_HAS_ESTIMATOR = _TF <= (2, 15)


def _upgrade(*argv):
  """Runs the command in a child process; returns the CompletedProcess."""
  return subprocess.run(
      [sys.executable, "-m", "contrib_mp_upgrade"] + list(argv),
      env=util.package_env(), capture_output=True, text=True, timeout=600,
      check=False)


def _section(report: str, title: str) -> str:
  """The text of one report section, from its title to the next blank line."""
  start = report.index(title + "\n")
  end = report.find("\n\n", start)
  return report[start:end if end >= 0 else len(report)]


def _blocker(report: str, what: str) -> str:
  """The `Fix:` text "Before you run it" gives for `what`."""
  section = _section(report, "Before you run it")
  match = re.search(r"^  - " + re.escape(what) + r": .*? Fix: (.*)\.$",
                    section, re.M)
  if match is None:
    raise AssertionError("No {!r} in \"Before you run it\":\n{}".format(
        what, section))
  return match.group(1)


def _ready(report: str):
  """`(files that will run, Python files)` from "Before you run it"."""
  match = re.search(r"^(\d+) of (\d+) Python files? will run",
                    _section(report, "Before you run it"), re.M)
  return int(match.group(1)), int(match.group(2))


class _Case(tf.test.TestCase):

  def setUp(self):
    super().setUp()
    self.tmp = tempfile.mkdtemp(prefix="upgrade_advice_test_")
    self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

  def convert(self, source, *flags, name="prog.py"):
    """Converts one file; returns (converted text, report text)."""
    infile = os.path.join(self.tmp, "in_" + name)
    with open(infile, "wb") as f:
      f.write(source if isinstance(source, bytes) else source.encode())
    outfile = os.path.join(self.tmp, name)
    report = os.path.join(self.tmp, name + ".report.txt")
    proc = _upgrade("--infile", infile, "--outfile", outfile,
                    "--reportfile", report, *flags)
    self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
    self.assertNotIn("Traceback", proc.stderr)
    with open(report, encoding="utf-8") as f:
      report_text = f.read()
    with open(outfile, encoding="utf-8") as f:
      return f.read(), report_text

  def run_program(self, code, *args, env=None):
    path = os.path.join(self.tmp, "run.py")
    with open(path, "w", encoding="utf-8") as f:
      f.write(code)
    return util.run_python([path] + list(args), cwd=self.tmp, env=env)


# -- Finding 6: every file tf_upgrade_v2 did not convert is counted ----------

_TF1_PROGRAM = (
    "import json\n"
    "import tensorflow as tf\n"
    "tf.disable_eager_execution()\n"
    "v = tf.Variable(1.0)\n"
    "print(json.dumps({\"n\": len(tf.trainable_variables())}))\n")


class FileCountsTest(_Case):
  """One `--tf_upgrade_v2` run of a small tree, which each test reads."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    tmp = tempfile.mkdtemp(prefix="upgrade_advice_test_")
    cls.addClassCleanup(shutil.rmtree, tmp, ignore_errors=True)
    tree = os.path.join(tmp, "tree")
    os.mkdir(tree)
    files = {
        # A byte-order mark: tf_upgrade_v2 alone leaves such a file empty.
        "bom.py": b"\xef\xbb\xbf" + _TF1_PROGRAM.encode(),
        # A coding declaration, and a latin-1 byte in a comment.
        "cookie.py": b"# -*- coding: latin-1 -*-\n# Fran\xe7oise\n" +
                     _TF1_PROGRAM.encode(),
        # Valid Python 3.10 that tf_upgrade_v2's parser stops on.
        "match.py": (b"import tensorflow as tf\n"
                     b"v = tf.trainable_variables()\n"
                     b"match v:\n  case []:\n    pass\n"),
        # Not UTF-8, and no declaration: neither converter can read it.
        "latin.py": b"# Fran\xe7oise\nimport tensorflow as tf\n"
                    b"v = tf.trainable_variables()\n",
    }
    for name, data in files.items():
      with open(os.path.join(tree, name), "wb") as f:
        f.write(data)
    cls.out = os.path.join(tmp, "out")
    report = os.path.join(tmp, "report.txt")
    proc = _upgrade("--intree", tree, "--outtree", cls.out, "--reportfile",
                    report, "--tf_upgrade_v2")
    if proc.returncode != 0:
      raise AssertionError(proc.stdout + proc.stderr)
    cls.stdout = proc.stdout
    with open(report, encoding="utf-8") as f:
      cls.report = f.read()

  def test_bom_and_declared_encoding_files_are_converted_and_run(self):
    for name in ("bom.py", "cookie.py"):
      with open(os.path.join(self.out, name), "rb") as f:
        data = f.read()
      self.assertIn(b"tf.compat.v1.trainable_variables()", data, msg=name)
      proc = util.run_python([os.path.join(self.out, name)], cwd=self.out)
      self.assertEqual(util.last_json(proc), {"n": 1}, msg=name)
    with open(os.path.join(self.out, "bom.py"), "rb") as f:
      self.assertTrue(f.read().startswith(b"\xef\xbb\xbfimport json\n"))
    with open(os.path.join(self.out, "cookie.py"), "rb") as f:
      self.assertIn(b"# Fran\xe7oise\n", f.read())  # Still latin-1.

  def test_files_not_converted_are_counted_as_not_ready(self):
    # bom.py and cookie.py run; match.py (tf_upgrade_v2 stopped on it) and
    # latin.py (unreadable) do not.
    self.assertEqual(_ready(self.report), (2, 4))
    # Which way it fails depends on the Python under tf_upgrade_v2: it
    # crashes on `match` where `ast` reads it (3.10+), and leaves the file
    # empty where it does not (3.9). Either way it is counted, with a fix.
    self.assertRegex(_blocker(
        self.report, "the rest of the TF1 API (tf_upgrade_v2 could not "
        "convert the file)") + self.report,
                     "tf_upgrade_v2 (stopped on it|could not parse it)")
    section = _section(self.report, "Before you run it")
    self.assertIn("  - the rest of the TF1 API (tf_upgrade_v2 could not "
                  "convert the file): 1 file (first: match.py). Fix: ",
                  section)
    self.assertIn("  - could not be read: NOTHING in it was converted: 1 file "
                  "(first: latin.py). Fix: ", section)
    self.assertNotIn("nothing this command knows of", self.report)
    self.assertIn("  - finish the 1 file tf_upgrade_v2 could not convert",
                  self.report)
    self.assertIn("  - apply the fixes \"Before you run it\" names for the 1 "
                  "file that will not run on TensorFlow 2 as they are.",
                  self.report)

  def test_every_count_agrees(self):
    self.assertIn("Of 4 Python files, it converted 2 (changed 2) and did NOT "
                  "convert 2; ", self.report)
    self.assertIn("match.py: NOT CONVERTED BY tf_upgrade_v2: ", self.report)
    self.assertIn("latin.py: NOT CONVERTED BY tf_upgrade_v2 (not given to "
                  "it): invalid UTF-8 at line 1 (byte 0xe7)", self.report)
    self.assertIn("Python files: 4 read, 0 converted, 1 not parsed; "
                  "tf_upgrade_v2 converted 2 and did NOT convert 2;",
                  self.report)
    self.assertIn("tf_upgrade_v2 did not convert 2;", self.stdout)
    # Each file in the first section is either ready or listed once.
    ready, total = _ready(self.report)
    listed = re.findall(r"^  - .*?: (\d+) files? \(first",
                        _section(self.report, "Before you run it"), re.M)
    self.assertEqual(ready + sum(int(n) for n in listed), total)


# -- Finding 7: causes named right --------------------------------------------


class CausesTest(_Case):

  def test_latin1_on_line_1_or_2_and_nul_bytes(self):
    tree = os.path.join(self.tmp, "tree")
    os.mkdir(tree)
    files = {
        "line1.py": b"# caf\xe9\nimport tensorflow as tf\n",
        "line2.py": b"#!/usr/bin/env python\n# caf\xe9\nimport os\n",
        "nul.py": b"import tensorflow as tf\n\nx = 1\x00\n",
        "nul_api.py": (b"import tensorflow as tf\nx = 1\x00\n"
                       b"o = tf.contrib.mixed_precision.LossScaleOptimizer\n"),
    }
    for name, data in files.items():
      with open(os.path.join(tree, name), "wb") as f:
        f.write(data)
    proc = _upgrade("--intree", tree, "--dry_run")
    self.assertEqual(proc.returncode, 0, proc.stderr)
    for line in (
        "line1.py: NOT CONVERTED: invalid UTF-8 at line 1 (byte 0xe9)",
        "line2.py: NOT CONVERTED: invalid UTF-8 at line 2 (byte 0xe9)",
        "nul.py: NOT CONVERTED: it contains a NUL byte (at line 3)",
        "nul_api.py: NOT CONVERTED: it contains a NUL byte (at line 2)",
    ):
      self.assertIn(line, proc.stdout)
    self.assertNotIn("coding declaration", proc.stdout)
    self.assertNotIn("syntax error", proc.stdout)


# -- Finding 9: tf.summary the same whichever TF runs tf_upgrade_v2 ----------

_SUMMARY_SOURCE = """\
import json
import tensorflow as tf

tf.compat.v1.disable_eager_execution()
x = tf.placeholder(tf.float32, [], name="x")
tf.summary.scalar("a", x)
tf.summary.histogram("h", x)
merged = tf.summary.merge_all()
with tf.Session() as sess:
  data = sess.run(merged, {x: 2.0})
tags = sorted(v.tag for v in tf.Summary.FromString(data).value)
print(json.dumps({"merged": merged is not None, "tags": tags}))
"""

# What `--tf_upgrade_v2` writes, on TF 2.15 and on TF 2.21 alike.
_SUMMARY_EXPECTED = """\
import json
import tensorflow as tf

tf.compat.v1.disable_eager_execution()
x = tf.compat.v1.placeholder(tf.float32, [], name="x")
tf.compat.v1.summary.scalar("a", x)
tf.compat.v1.summary.histogram("h", x)
merged = tf.compat.v1.summary.merge_all()
with tf.compat.v1.Session() as sess:
  data = sess.run(merged, {x: 2.0})
tags = sorted(v.tag for v in tf.compat.v1.Summary.FromString(data).value)
print(json.dumps({"merged": merged is not None, "tags": tags}))
"""


class SummaryTest(_Case):

  def test_same_output_on_any_tf_and_it_runs(self):
    code, report = self.convert(_SUMMARY_SOURCE, "--tf_upgrade_v2")
    self.assertEqual(code, _SUMMARY_EXPECTED)
    values = util.last_json(self.run_program(code))
    self.assertEqual(values, {"merged": True, "tags": ["a", "h"]})
    self.assertEqual(_ready(report), (1, 1))
    self.assertNotIn("(tf_upgrade_v2 makes this rename)", report)
    if _TF >= (2, 16):
      # Its converter left them; this command renamed them, and says so.
      self.assertIn("output lines 6, 7: TF1 `tf.summary.X` renamed "
                    "`tf.compat.v1.summary.X` by this command after "
                    "tf_upgrade_v2", report)

  def test_without_the_flag_the_advice_names_the_flag(self):
    _, report = self.convert(_SUMMARY_SOURCE)
    fix = _blocker(report, "tf.summary.scalar")
    self.assertIn("use `tf.compat.v1.summary.scalar` (--tf_upgrade_v2 makes "
                  "this rename, whichever TensorFlow runs it)", fix)


# -- Finding 10: the tf.contrib.tpu classes are in compat.v1.estimator.tpu ---

_TPU_SOURCE = """\
import json
import tensorflow as tf


def model_fn(features, labels, mode, params):
  loss = tf.reduce_sum(features)
  return tf.contrib.tpu.TPUEstimatorSpec(mode, loss=loss)


config = tf.contrib.tpu.RunConfig(
    model_dir={model_dir!r},
    tpu_config=tf.contrib.tpu.TPUConfig(
        iterations_per_loop=2,
        per_host_input_for_training=(
            tf.contrib.tpu.InputPipelineConfig.PER_HOST_V2)))
estimator = tf.contrib.tpu.TPUEstimator(
    model_fn=model_fn, config=config, use_tpu=False, train_batch_size=4)
spec = model_fn(tf.ones([2]), None, "eval", {{}})
print(json.dumps({{"iterations": config.tpu_config.iterations_per_loop,
                  "estimator": type(estimator).__name__,
                  "spec": type(spec).__name__}}))
"""
_TPU_VALUES = {"iterations": 2, "estimator": "TPUEstimator",
               "spec": "TPUEstimatorSpec"}
_TPU_NAMES = ("TPUEstimator", "TPUEstimatorSpec", "RunConfig", "TPUConfig",
              "InputPipelineConfig")


class TpuTest(_Case):

  def test_following_the_advice_runs_on_tf_2_15(self):
    source = _TPU_SOURCE.format(model_dir=os.path.join(self.tmp, "m"))
    code, report = self.convert(source)
    fix = _blocker(report, "tf.contrib.tpu")
    self.assertIn("`TPUEstimator`, `TPUEstimatorSpec`, `RunConfig`, "
                  "`TPUConfig` and `InputPipelineConfig` are "
                  "`tf.compat.v1.estimator.tpu.X`", fix)
    for name in _TPU_NAMES:
      code = code.replace("tf.contrib.tpu." + name,
                          "tf.compat.v1.estimator.tpu." + name)
    self.assertNotIn("contrib", code)
    proc = self.run_program(code)
    if not _HAS_ESTIMATOR:
      self.assertNotEqual(proc.returncode, 0)
      self.assertIn("estimator", proc.stderr)
      return
    self.assertEqual(util.last_json(proc), _TPU_VALUES)

  def test_tf_upgrade_v2_renames_them_on_any_tf(self):
    source = _TPU_SOURCE.format(model_dir=os.path.join(self.tmp, "m"))
    code, report = self.convert(source, "--tf_upgrade_v2")
    for name in _TPU_NAMES:
      self.assertNotIn("tf.contrib.tpu." + name, code)
    self.assertEqual(code.count("tf.compat.v1.estimator.tpu."), 5)
    # TF 2.16+'s converter calls them impossible to convert; they were.
    self.assertNotIn("cannot be converted automatically", report)
    self.assertIn("Estimator (needs TensorFlow 2.15 or older)",
                  _section(report, "Before you run it"))
    if _HAS_ESTIMATOR:
      self.assertEqual(util.last_json(self.run_program(code)),
                       _TPU_VALUES)


# -- Finding 11: Estimator needs TF 2.15 or older ----------------------------

_ESTIMATOR_SOURCE = """\
import json
import numpy as np
import tensorflow as tf

X = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
Y = 3.0 * X


def model_fn(features, labels, mode):
  w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
  loss = tf.reduce_mean(tf.square(features["x"] * w - labels))
  train_op = tf.train.GradientDescentOptimizer(0.05).minimize(
      loss, global_step=tf.train.get_or_create_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


estimator = tf.estimator.Estimator(model_fn, model_dir={model_dir!r})
input_fn = tf.estimator.inputs.numpy_input_fn(
    {{"x": X}}, Y, batch_size=4, num_epochs=None, shuffle=False)
estimator.train(input_fn, steps=5)
print(json.dumps({{"w": float(estimator.get_variable_value("w"))}}))
"""


class EstimatorTest(_Case):

  def test_flagged_and_the_advice_is_right(self):
    source = _ESTIMATOR_SOURCE.format(model_dir=os.path.join(self.tmp, "m"))
    code, report = self.convert(source, "--tf_upgrade_v2")
    self.assertEqual(_ready(report), (0, 1))
    fix = _blocker(report, "Estimator (needs TensorFlow 2.15 or older)")
    self.assertIn("TensorFlow 2.16 removed `tf.estimator`", fix)
    self.assertIn("pip install 'tensorflow==2.15.*' "
                  "'tensorflow-estimator==2.15.*'", fix)
    proc = self.run_program(code)
    if not _HAS_ESTIMATOR:
      # As the report says: on 2.16+ the program dies.
      self.assertNotEqual(proc.returncode, 0)
      self.assertIn("has no attribute 'estimator'", proc.stderr)
      return
    w = 0.0
    x = np.array([1.0, 2.0, 3.0, 4.0])
    for _ in range(5):
      w -= 0.05 * np.mean(2.0 * x * (x * w - 3.0 * x))
    self.assertAllClose(util.last_json(proc)["w"], w, rtol=1e-5)

  def test_every_way_of_reaching_it_is_flagged(self):
    for source in (
        "import tensorflow as tf\ne = tf.estimator.Estimator\n",
        "import tensorflow as tf\ne = tf.compat.v1.estimator.Estimator\n",
        "from tensorflow.python.estimator import estimator\n",
        "import tensorflow_estimator as tfe\n",
        "from tensorflow_estimator.python.estimator.tpu import "
        "tpu_estimator\n",
        "from somewhere import TPUEstimator\n",
    ):
      _, report = self.convert(source)
      self.assertIn("  - Estimator (needs TensorFlow 2.15 or older): 1 file",
                    report, msg=source)


# -- Finding 12: tf.flags ----------------------------------------------------

_FLAGS_SOURCE = """\
import json
import tensorflow as tf

tf.flags.DEFINE_integer("steps", 3, "How many steps.")
tf.app.flags.DEFINE_string("name", "x", "A name.")
FLAGS = tf.flags.FLAGS


def main(_):
  print(json.dumps({"steps": FLAGS.steps, "name": FLAGS.name}))


if __name__ == "__main__":
  tf.app.run()
"""


class FlagsTest(_Case):

  def test_following_the_advice_runs(self):
    code, report = self.convert(_FLAGS_SOURCE, "--tf_upgrade_v2")
    fix = _blocker(report, "tf.flags (removed in TF 2)")
    self.assertIn("add `from absl import flags` and write `flags.X` for "
                  "`tf.flags.X` and `tf.app.flags.X`", fix)
    proc = self.run_program(code, "--steps", "5")
    self.assertNotEqual(proc.returncode, 0)  # As the report says.
    self.assertIn("has no attribute 'flags'", proc.stderr)
    code = code.replace("import tensorflow as tf\n",
                        "import tensorflow as tf\nfrom absl import flags\n")
    for old in ("tf.compat.v1.app.flags.", "tf.app.flags.", "tf.flags."):
      code = code.replace(old, "flags.")
    values = util.last_json(self.run_program(code, "--steps", "5",
                                             "--name", "y"))
    self.assertEqual(values, {"steps": 5, "name": "y"})
    self.assertNotIn("before `app.run()`", fix)

  def test_reading_flags_before_app_run_is_advised_and_runs(self):
    # Issue 43, item 6 (google-research's BERT fork): TF 1's flags parsed
    # themselves on the first read; absl's raise UnparsedFlagAccessError.
    source = _FLAGS_SOURCE.replace(
        '  print(json.dumps({"steps": FLAGS.steps, "name": FLAGS.name}))\n',
        '  print(json.dumps({"steps": FLAGS.steps, "name": FLAGS.name,\n'
        '                    "early": EARLY}))\n').replace(
            'if __name__ == "__main__":\n',
            'if __name__ == "__main__":\n  EARLY = FLAGS.steps * 2\n')
    code, report = self.convert(source, "--tf_upgrade_v2")
    fix = _blocker(report, "tf.flags (removed in TF 2)")
    code = code.replace("import tensorflow as tf\n",
                        "import tensorflow as tf\nfrom absl import flags\n")
    for old in ("tf.compat.v1.app.flags.", "tf.app.flags.", "tf.flags."):
      code = code.replace(old, "flags.")
    proc = self.run_program(code, "--steps", "5")
    self.assertNotEqual(proc.returncode, 0)  # As the report says.
    self.assertIn("UnparsedFlagAccessError", proc.stderr)
    # The advice, literally: the call it names, before the first read.
    self.assertIn("line 15 reads `FLAGS` before `app.run()`", fix)
    call = re.search(r"call `(flags\.FLAGS\(sys\.argv[^`]*\))` before",
                     fix).group(1)
    self.assertIn("add `import sys`", fix)
    code = "import sys\n" + code.replace(
        'if __name__ == "__main__":\n',
        'if __name__ == "__main__":\n  {}\n'.format(call))
    values = util.last_json(self.run_program(code, "--steps", "5",
                                             "--name", "y"))
    self.assertEqual(values, {"steps": 5, "name": "y", "early": 10})


# -- Finding 13: slim.utils ---------------------------------------------------

_SLIM_SOURCE = """\
import json
import numpy as np
import tensorflow.compat.v1 as tf

slim = tf.contrib.slim
tf.disable_v2_behavior()


def net(x):
  collection = "net_end_points"
  with slim.arg_scope([slim.fully_connected],
                      outputs_collections=collection):
    y = slim.fully_connected(x, 2, scope="fc")
  z = tf.identity(y, name="z")
  slim.utils.collect_named_outputs(collection, "z", z)
  return z, slim.utils.convert_collection_to_dict(collection)


x = tf.placeholder(tf.float32, [1, 3])
z, end_points = net(x)
with tf.Session() as sess:
  sess.run(tf.global_variables_initializer())
  out = sess.run(end_points["z"], {x: np.ones([1, 3])})
print(json.dumps({"keys": sorted(end_points), "shape": list(out.shape)}))
"""


class SlimUtilsTest(_Case):

  def test_slim_utils_is_rewritten_and_the_file_runs(self):
    code, report = self.convert(_SLIM_SOURCE, "--contrib-to-slim")
    self.assertNotIn("contrib", code)
    self.assertIn("slim = tf_slim\n", code)
    self.assertIn("slim.utils.convert_collection_to_dict(collection)", code)
    self.assertNotIn("not rewritten to tf_slim", report)
    values = util.last_json(self.run_program(code))
    self.assertEqual(values, {"keys": ["fc", "z"], "shape": [1, 2]})

  def test_written_out_it_becomes_tf_slim_utils(self):
    code, _ = self.convert(
        "import tensorflow as tf\n"
        "d = tf.contrib.slim.utils.convert_collection_to_dict('c')\n",
        "--contrib-to-slim")
    self.assertIn("d = tf_slim.utils.convert_collection_to_dict('c')\n",
                  code)


# -- Finding 14: Dimension .value needs disable_v2_behavior ------------------

_DIMENSION_SOURCE = """\
import json
import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 3])
n = x.shape[-1].value
m = x.get_shape()[1].value
y = tf.matmul(x, tf.ones([n, 1]))
with tf.Session() as sess:
  out = sess.run(y, {x: np.ones([2, 3])})
print(json.dumps({"n": n, "m": m, "y": out.tolist()}))
"""


class DimensionTest(_Case):

  def test_advice_is_disable_v2_behavior_and_it_runs(self):
    code, report = self.convert(_DIMENSION_SOURCE, "--tf_upgrade_v2")
    session = _blocker(report, "Session code under TF 2's eager default")
    self.assertIn("call `tf.compat.v1.disable_v2_behavior()` once", session)
    self.assertIn("(`disable_eager_execution()` is not enough here)", session)
    fix = _blocker(report, "Dimension `.value` under TF 2 shapes")
    self.assertIn("call `tf.compat.v1.disable_v2_behavior()` once, right "
                  "after TensorFlow is imported", fix)
    self.assertIn("  - Dimension `.value` under TF 2 shapes: 1 file, 2 uses",
                  report)
    # disable_eager_execution() alone: shapes are still TF 2's ints.
    eager_off = code.replace(
        "import tensorflow as tf\n",
        "import tensorflow as tf\ntf.compat.v1.disable_eager_execution()\n")
    proc = self.run_program(eager_off)
    self.assertNotEqual(proc.returncode, 0)
    self.assertIn("'int' object has no attribute 'value'", proc.stderr)
    # The advice, exactly.
    fixed = code.replace(
        "import tensorflow as tf\n",
        "import tensorflow as tf\ntf.compat.v1.disable_v2_behavior()\n")
    values = util.last_json(self.run_program(fixed))
    self.assertEqual(values, {"n": 3, "m": 3, "y": [[3.0], [3.0]]})
    # Once the program does it, nothing is left to report.
    _, again = self.convert(fixed, "--tf_upgrade_v2", name="fixed.py")
    self.assertEqual(_ready(again), (1, 1))

  def test_an_entry_script_that_disables_v2_behavior_clears_modules(self):
    tree = os.path.join(self.tmp, "tree")
    os.mkdir(tree)
    with open(os.path.join(tree, "main.py"), "w") as f:
      f.write("import tensorflow as tf\nimport lib\n"
              "tf.compat.v1.disable_v2_behavior()\n"
              "if __name__ == '__main__':\n  lib.width(None)\n")
    with open(os.path.join(tree, "lib.py"), "w") as f:
      f.write("def width(x):\n  return x.shape[-1].value\n")
    proc = _upgrade("--intree", tree, "--dry_run")
    self.assertEqual(proc.returncode, 0, proc.stderr)
    self.assertEqual(_ready(proc.stdout), (2, 2))


# -- Issue 43, item 5: tf-keras for a tensorflow-cpu user --------------------

_LAYERS_SOURCE = """\
import tensorflow as tf

x = tf.compat.v1.placeholder(tf.float32, [None, 3])
y = tf.compat.v1.layers.dense(x, 2)
"""


def _fake_tensorflow_cpu_venv(root: str) -> str:
  """A venv whose only TensorFlow is a `tensorflow-cpu` distribution.

  Only its metadata: pip decides what to install from what is installed,
  and a second TensorFlow is what it must not add. Returns its python.
  """
  venv = os.path.join(root, "venv")
  subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv],
                 check=True, capture_output=True, timeout=120)
  python = os.path.join(venv, "bin", "python")
  purelib = subprocess.run(
      [python, "-c", "import sysconfig; print(sysconfig.get_paths()"
       "['purelib'])"], check=True, capture_output=True, text=True,
      timeout=60).stdout.strip()
  info = os.path.join(purelib, "tensorflow_cpu-{}.dist-info".format(
      tf.__version__))
  os.makedirs(info)
  with open(os.path.join(info, "METADATA"), "w") as f:
    f.write("Metadata-Version: 2.1\nName: tensorflow-cpu\nVersion: {}\n"
            .format(tf.__version__))
  with open(os.path.join(info, "INSTALLER"), "w") as f:
    f.write("pip\n")
  open(os.path.join(info, "RECORD"), "w").close()
  return python


def _pip_with_python_option(root: str):
  """(argv, env) of a pip with `--python`, `--dry-run` and `--report` (22.3+).

  The runner's own pip where it is new enough; otherwise a current pip from
  PyPI, installed under `root` and put first on PYTHONPATH (Debian
  bullseye's Python 3.9, in the full suite's chroot, ships pip 20).
  """
  argv = [sys.executable, "-m", "pip"]
  found = subprocess.run(argv + ["--version"], capture_output=True,
                         text=True, timeout=60, check=True).stdout.split()
  if packaging_version.parse(found[1]) >= packaging_version.parse("22.3"):
    return argv, None
  target = os.path.join(root, "modern_pip")
  subprocess.run(argv + ["install", "--quiet", "--target", target,
                         "pip>=23"], capture_output=True, timeout=600,
                 check=True)
  return argv, dict(os.environ, PYTHONPATH=target)


class LegacyKerasAdviceTest(_Case):
  """The `tf.layers` fix, run by pip against a `tensorflow-cpu` venv.

  `pip install 'contrib_mixed_precision[legacy-keras]'` pulled in
  `tensorflow` (572 MB) beside `tensorflow-cpu`: tf-keras requires it, and
  both own `site-packages/tensorflow`. Needs PyPI (pip resolves, with
  `--dry-run`, and downloads nothing but metadata).
  """

  def test_the_pip_command_installs_no_second_tensorflow(self):
    _, report = self.convert(_LAYERS_SOURCE)
    # The advice is given once, in "Keras 2"; the fix points there.
    self.assertIn("the report's \"Keras 2\" says how",
                  _blocker(report, "tf.layers"))
    section = report.split("\nKeras 2\n", 1)[1].split("\n\n", 1)[0]
    commands = [l.strip() for l in section.splitlines()
                if "pip install" in l]
    self.assertLen(commands, 1, section)
    self.assertIn("TF_USE_LEGACY_KERAS=1", section)
    # The line names this machine's TensorFlow. A nightly build (the
    # tf_nightly environment) has no tf-keras release yet, so the report
    # gives the line that asks TensorFlow where it runs: the newest
    # supported minor stands in for its answer.
    release = packaging_version.parse(tf.__version__)
    command = commands[0]
    self.assertTrue(command.startswith("python -m pip install --no-deps "),
                    command)
    if release.is_prerelease:
      release = packaging_version.parse(version.MAX_TF_VERSION)
      minor = "{}.{}".format(release.major, release.minor - 1)
      command = re.sub(r'"tf-keras==\$\(.*\)\.\*"',
                       "'tf-keras=={}.*'".format(minor), command)
    else:
      minor = "{}.{}".format(release.major, release.minor)
    # The shell expands the line as written, with this TensorFlow's Python
    # as `python` (where TF is older than 2.16 the line asks TensorFlow
    # which it is); pip then runs with its arguments.
    bin_dir = os.path.join(self.tmp, "bin")
    os.makedirs(bin_dir, exist_ok=True)
    # A script, not a link: a venv's Python finds its packages from the
    # path it was started by.
    wrapper = os.path.join(bin_dir, "python")
    with open(wrapper, "w") as f:
      f.write("#!/bin/sh\nexec {} \"$@\"\n".format(shlex.quote(
          sys.executable)))
    os.chmod(wrapper, 0o755)
    expanded = subprocess.run(
        ["bash", "-c", "printf '%s\\n' " +
         command[len("python -m pip "):]], capture_output=True, text=True,
        timeout=300, check=True, env=dict(
            os.environ, TF_CPP_MIN_LOG_LEVEL="3",
            PATH=bin_dir + os.pathsep + os.environ.get("PATH", "")))
    argv = ["pip"] + expanded.stdout.splitlines()
    self.assertEqual(argv[1:3], ["install", "--no-deps"])
    python = _fake_tensorflow_cpu_venv(self.tmp)
    out = os.path.join(self.tmp, "pip_report.json")
    pip, env = _pip_with_python_option(self.tmp)
    proc = subprocess.run(
        pip + ["--python", python] + argv[1:] +
        ["--dry-run", "--quiet", "--report", out], capture_output=True,
        text=True, timeout=600, check=False, env=env)
    self.assertEqual(proc.returncode, 0, proc.stderr)
    with open(out, encoding="utf-8") as f:
      install = json.load(f)["install"]
    names = [i["metadata"]["name"].lower().replace("_", "-") for i in install]
    self.assertEqual(names, ["tf-keras"])
    self.assertEqual(install[0]["metadata"]["version"].rsplit(".", 1)[0],
                     minor)
    # What `--no-deps` leaves out is exactly the second TensorFlow.
    requires = install[0]["metadata"]["requires_dist"]
    self.assertTrue(any(r.startswith("tensorflow") for r in requires),
                    requires)

  def test_the_readme_gives_the_same_command(self):
    with open(os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "README.md"), encoding="utf-8") as f:
      readme = f.read()
    self.assertIn("pip install --no-deps 'tf-keras~=2.N.0'", readme)
    self.assertNotRegex(readme, r"pip install [^`\n]*\[legacy-keras\]")


# -- Issue 43, item 7: 'loss_scale:0' fetched by name in a hook class -------

_HOOKS_SOURCE = """\
import tensorflow as tf


class LossScaleLogger(tf.train.SessionRunHook):

  def before_run(self, run_context):
    return tf.train.SessionRunArgs({"scale": "loss_scale:0"})

  def after_run(self, run_context, run_values):
    SCALES.append(float(run_values.results["scale"]))


class GraphLogger(tf.train.SessionRunHook):

  def begin(self):
    self._scale = tf.get_default_graph().get_tensor_by_name(
        "loss_scale:0")


SCALES = []
"""

_HOOK_MAIN_SOURCE = """\
import json
import tensorflow as tf
tf.compat.v1.disable_eager_execution()
import hooks

v = tf.Variable(1.0)
manager = tf.contrib.mixed_precision.ExponentialUpdateLossScaleManager(4.0, 1)
opt = tf.contrib.mixed_precision.LossScaleOptimizer(
    tf.train.GradientDescentOptimizer(0.1), manager)
train_op = opt.minimize(v * v,
                        global_step=tf.train.get_or_create_global_step())
with tf.train.MonitoredTrainingSession(
    hooks=[hooks.LossScaleLogger(), hooks.GraphLogger()]) as sess:
  for _ in range(2):
    sess.run(train_op)
print(json.dumps({"scales": hooks.SCALES}))
"""


class ByNameFetchTest(_Case):
  """A hook that fetches 'loss_scale:0' needs ref variables.

  Under TF 2 behaviour, `disable_eager_execution()` included, the name is
  the resource variable's handle, and the step died with TypeError. The
  report said nothing of the hook's file: none of its names is Session
  code, and the entry script already turns graph mode on.
  """

  def _convert_tree(self):
    tree = os.path.join(self.tmp, "tree")
    os.mkdir(tree)
    for name, source in (("hooks.py", _HOOKS_SOURCE),
                         ("main.py", _HOOK_MAIN_SOURCE)):
      with open(os.path.join(tree, name), "w") as f:
        f.write(source)
    out = os.path.join(self.tmp, "out")
    report_path = os.path.join(self.tmp, "report.txt")
    proc = _upgrade("--intree", tree, "--outtree", out, "--reportfile",
                    report_path, "--tf_upgrade_v2")
    self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
    with open(report_path, encoding="utf-8") as f:
      return out, f.read()

  def test_flagged_in_the_hook_file_and_the_advice_runs(self):
    out, report = self._convert_tree()
    section = _section(report, "Before you run it")
    what = "the loss scale's variable fetched by name ('loss_scale:0')"
    self.assertIn("  - {}: 1 file, 2 uses (first: hooks.py)".format(what),
                  section)
    self.assertEqual(_ready(report), (1, 2))
    fix = _blocker(report, what)
    self.assertIn("`disable_eager_execution()` is not enough", fix)
    main = os.path.join(out, "main.py")
    proc = util.run_python([main], cwd=out)
    self.assertNotEqual(proc.returncode, 0)  # As the report says.
    self.assertIn("TypeError", proc.stderr)
    # The advice: disable_v2_behavior() once, right after the import.
    self.assertIn("Call `tf.compat.v1.disable_v2_behavior()` once, right "
                  "after TensorFlow is imported, in the program's entry "
                  "script", fix)
    with open(main, encoding="utf-8") as f:
      code = f.read()
    code = code.replace("import tensorflow as tf\n",
                        "import tensorflow as tf\n"
                        "tf.compat.v1.disable_v2_behavior()\n", 1)
    with open(main, "w", encoding="utf-8") as f:
      f.write(code)
    # The scale after each step: 4 * 2 (one good step raises it), then 16.
    self.assertEqual(util.last_json(util.run_python([main], cwd=out)),
                     {"scales": [8.0, 16.0]})
    # Once the program does it, the hook file is no longer flagged for it.
    # (TF 2.15's tf_upgrade_v2 renames `tf.train.SessionRunHook` to
    # `tf.estimator.SessionRunHook`, which is then flagged as Estimator.)
    proc = _upgrade("--intree", out, "--dry_run")
    self.assertEqual(proc.returncode, 0, proc.stderr)
    self.assertNotIn(what, proc.stdout)
    with open(os.path.join(out, "hooks.py"), encoding="utf-8") as f:
      renamed = "tf.estimator.SessionRunHook" in f.read()
    self.assertEqual(_ready(proc.stdout), (1, 2) if renamed else (2, 2))


if __name__ == "__main__":
  tf.test.main()
