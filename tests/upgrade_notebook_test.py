# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""`contrib-mp-upgrade` on Jupyter notebooks, from the user's side.

Much TF 1.15 mixed-precision code lives in notebooks. The command converts
their code cells, keeps IPython syntax (`%matplotlib`, `%%time`, `!pip`,
`obj?`) byte for byte, leaves markdown, outputs and metadata alone, writes a
notebook Jupyter reads, and names findings by cell. The notebooks are
written here; the command runs as a subprocess (`python -m
contrib_mp_upgrade`), and the converted cells, run one after the other with
the IPython lines left out, train to numbers computed independently
(tests/upgrade_fixture_util.py).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import tensorflow as tf

import contrib_mp_upgrade
import upgrade_fixture_util as util

# TF 1.15 code through `tensorflow.compat.v1`: after this command alone it
# runs on TF 2. Cell numbers in the report count every cell from 1.
_TRAIN_CELLS = [
    ("markdown", "# Loss scaling in a notebook\n"
                 "TF 1.15 style, with `tf.contrib.mixed_precision` \u2014 "
                 "na\u00efve r\u00e9sum\u00e9."),
    ("code", [
        "%matplotlib inline\n",
        "!pip install --quiet \\\n",
        "    contrib_mixed_precision\n",
        "import json\n",
        "import numpy as np\n",
        "import tensorflow.compat.v1 as tf\n",
        "tf.disable_v2_behavior()"]),
    ("markdown", ["## The model\n", "A line through four points."]),
    ("code",  # A string source, as some tools write it.
     "X = np.array([[1.0], [2.0], [3.0], [4.0]], dtype=np.float32)\n"
     "Y = 3.0 * X + 1.0\n"
     "x = tf.placeholder(tf.float32, [None, 1])\n"
     "y = tf.placeholder(tf.float32, [None, 1])\n"
     "w = tf.get_variable('w', [1, 1], initializer=tf.zeros_initializer())\n"
     "b = tf.get_variable('b', [1], initializer=tf.zeros_initializer())\n"
     "loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))\n"
     "%time fixed = tf.contrib.mixed_precision.FixedLossScaleManager(3.0)\n"
     "tf.train.Optimizer?"),
    ("code", [
        "%%time\n",
        "manager = tf.contrib.mixed_precision."
        "ExponentialUpdateLossScaleManager(\n",
        "    128, 2, 2, 2, 0.5)\n",
        "opt = tf.contrib.mixed_precision.LossScaleOptimizer(\n",
        "    tf.train.GradientDescentOptimizer(0.05), manager)\n",
        "train_op = opt.minimize(loss)"]),
    ("code", [
        "%%bash\n",
        "echo tf.contrib.mixed_precision.LossScaleOptimizer is not Python\n",
        "if [ 1 ]; then echo here; fi"]),
    ("raw", "tf.contrib.mixed_precision in a raw cell stays"),
    ("code", [
        "sess = tf.Session()\n",
        "sess.run(tf.global_variables_initializer())\n",
        "for step in range(6):\n",
        "    if step == 3:\n",
        "        !echo NaN step $step\n",
        "    feed = {x: np.full_like(X, np.nan) if step == 3 else X, y: Y}\n",
        "    sess.run(train_op, feed)\n",
        "values = sess.run({'loss': loss, 'w': w, 'b': b,\n",
        "                   'scale': manager.get_loss_scale(),\n",
        "                   'fixed': fixed.get_loss_scale()},\n",
        "                  {x: X, y: Y})\n",
        "print(json.dumps({k: float(np.ravel(v)[0]) "
        "for k, v in values.items()}))\n"]),
    ("code", ""),
]
_TRAIN_PROGRAM = util.Program("train.ipynb", 6, (3,),
                              ("exponential", 128.0, 2, 2, 2, 0.5))

# Plain TF 1.x API: it needs `--tf_upgrade_v2` too.
_TF1_CELLS = [
    ("code", ["import json\n", "import numpy as np\n",
              "import tensorflow as tf\n", "!nvidia-smi -L"]),
    ("code", [
        "graph = tf.Graph()\n",
        "with graph.as_default():\n",
        "  x = tf.placeholder(tf.float32, [None, 1])\n",
        "  y = tf.placeholder(tf.float32, [None, 1])\n",
        "  w = tf.get_variable('w', [1, 1], "
        "initializer=tf.zeros_initializer())\n",
        "  b = tf.get_variable('b', [1], initializer=tf.zeros_initializer())\n",
        "  loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))\n",
        "  manager = tf.contrib.mixed_precision.FixedLossScaleManager(64.0)\n",
        "  opt = tf.contrib.mixed_precision.LossScaleOptimizer(\n",
        "      tf.train.GradientDescentOptimizer(0.05), manager)\n",
        "  train_op = opt.minimize(loss, var_list=tf.trainable_variables())\n",
        "  init = tf.global_variables_initializer()"]),
    ("code", [
        "%time X = np.array([[1.0], [2.0], [3.0], [4.0]], np.float32)\n",
        "X = np.array([[1.0], [2.0], [3.0], [4.0]], np.float32)\n",
        "Y = 3.0 * X + 1.0\n",
        "with tf.Session(graph=graph) as sess:\n",
        "  sess.run(init)\n",
        "  for step in range(5):\n",
        "    sess.run(train_op, {x: np.full_like(X, np.nan) if step == 1 "
        "else X, y: Y})\n",
        "  values = sess.run({'loss': loss, 'w': w, 'b': b,\n",
        "                     'scale': manager.get_loss_scale()}, "
        "{x: X, y: Y})\n",
        "print(json.dumps({k: float(np.ravel(v)[0]) "
        "for k, v in values.items()}))"]),
]
_TF1_PROGRAM = util.Program("tf1.ipynb", 5, (1,), ("fixed", 64.0))

# Lines that are IPython, not Python; never fed to Python.
_MAGIC_PREFIXES = ("%", "!", "?")
# A line magic whose statement IPython runs in the notebook: converted.
_TIME = "%time "


def _notebook(cells):
  """An nbformat 4 notebook, as a dict, with outputs and metadata to keep."""
  out = []
  for i, (kind, source) in enumerate(cells):
    cell = {"cell_type": kind, "metadata": {"tags": ["c{}".format(i)]},
            "source": source}
    if kind == "code":
      cell["execution_count"] = i
      cell["outputs"] = [{"name": "stdout", "output_type": "stream",
                          "text": ["output of cell {} \u2713\n".format(i)]}]
    out.append(cell)
  return {
      "cells": out,
      "metadata": {
          "kernelspec": {"display_name": "Python 3", "language": "python",
                         "name": "python3"},
          "language_info": {"name": "python", "version": "3.6.9"}},
      "nbformat": 4, "nbformat_minor": 2}


def _jupyter_bytes(notebook):
  """The bytes Jupyter writes for `notebook` (nbformat's own settings)."""
  return (json.dumps(notebook, sort_keys=True, indent=1, ensure_ascii=False)
          + "\n").encode("utf-8")


def _text(source):
  return source if isinstance(source, str) else "".join(source)


def _magic_lines(source):
  """The IPython lines of a cell: magics, shell lines and their `\\` tails."""
  lines = _text(source).split("\n")
  if lines[0].startswith("%%") and not lines[0].startswith("%%time"):
    return lines  # A cell magic that is not Python (%%bash).
  out, tail = [], False
  for line in lines:
    if line.startswith(_TIME):
      continue  # Its statement is converted.
    if tail or line.lstrip().startswith(_MAGIC_PREFIXES) or (
        line.rstrip().endswith("?")):
      out.append(line)
      tail = line.endswith("\\")
  return out


def _program(notebook):
  """The code cells of `notebook` as one program, IPython lines as `pass`.

  A `%time` line runs its statement, as IPython does.
  """
  parts = []
  for cell in notebook["cells"]:
    if cell["cell_type"] != "code":
      continue
    magics = set(_magic_lines(cell["source"]))
    lines, tail = [], False
    for line in _text(cell["source"]).split("\n"):
      if line.startswith(_TIME):
        line = line[len(_TIME):]  # What IPython runs, as it runs it.
      elif line in magics:
        if not tail:  # A `\` continuation keeps its first line's indent.
          indent = line[:len(line) - len(line.lstrip())]
        tail = line.endswith("\\")
        line = indent + "pass"
      lines.append(line)
    parts.append("\n".join(lines))
  return "\n".join(parts) + "\n"


def _env():
  env = dict(os.environ)
  root = os.path.dirname(os.path.dirname(
      os.path.abspath(contrib_mp_upgrade.__file__)))
  env["PYTHONPATH"] = os.pathsep.join(
      p for p in (root, env.get("PYTHONPATH")) if p)
  env["PYTHONDONTWRITEBYTECODE"] = "1"
  return env


def _command(*args, cwd):
  return subprocess.run(
      [sys.executable, "-m", "contrib_mp_upgrade"] + list(args), cwd=cwd,
      env=_env(), capture_output=True, text=True, timeout=600, check=False)


def _read(path):
  with open(path, "rb") as f:
    return f.read()


def _where(cells, text):
  """`cell N, line M` (both from 1; every cell counted) of `text`."""
  for i, (_, source) in enumerate(cells):
    for j, line in enumerate(_text(source).split("\n")):
      if text in line:
        return "cell {}, line {}".format(i + 1, j + 1)
  raise AssertionError("{!r} is in no cell".format(text))


class UpgradeNotebookTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.tmp = tempfile.mkdtemp(prefix="upgrade_notebook_test_")
    cls.tree = os.path.join(cls.tmp, "tree")
    os.makedirs(os.path.join(cls.tree, "nb"))
    cls.train = _notebook(_TRAIN_CELLS)
    cls.train_bytes = _jupyter_bytes(cls.train)
    with open(os.path.join(cls.tree, "nb", "train.ipynb"), "wb") as f:
      f.write(cls.train_bytes)
    # Not Jupyter's formatting, and nothing to convert: kept byte for byte.
    cls.plain_bytes = json.dumps(
        _notebook([("code", "print('no API here')\n%ls")]),
        indent=2).encode("ascii")
    with open(os.path.join(cls.tree, "plain.ipynb"), "wb") as f:
      f.write(cls.plain_bytes)
    cls.outtree = os.path.join(cls.tmp, "out")
    cls.report = os.path.join(cls.tmp, "report.txt")
    cls.proc = _command("--intree", cls.tree, "--outtree", cls.outtree,
                        "--reportfile", cls.report, cwd=cls.tmp)
    with open(cls.report, encoding="utf-8") as f:
      cls.report_text = f.read()
    cls.out_bytes = _read(os.path.join(cls.outtree, "nb", "train.ipynb"))
    cls.out = json.loads(cls.out_bytes.decode("utf-8"))

  @classmethod
  def tearDownClass(cls):
    shutil.rmtree(cls.tmp, ignore_errors=True)
    super().tearDownClass()

  def test_command_succeeds_without_traceback(self):
    self.assertEqual(self.proc.returncode, 0,
                     self.proc.stdout + self.proc.stderr)
    self.assertNotIn("Traceback", self.proc.stderr)

  def test_code_cells_are_converted(self):
    code = _program(self.out)
    self.assertNotIn("tf.contrib", code)
    self.assertIn("import contrib_mixed_precision\n", code)
    self.assertIn("manager = contrib_mixed_precision."
                  "ExponentialUpdateLossScaleManager(", code)
    self.assertIn("opt = contrib_mixed_precision.LossScaleOptimizer(", code)
    self.assertIn("\n%time fixed = contrib_mixed_precision."
                  "FixedLossScaleManager(3.0)\n",
                  "".join(_text(c["source"]) for c in self.out["cells"]))

  def test_notebook_is_valid_and_only_code_sources_change(self):
    self.assertEqual(self.out["nbformat"], 4)
    self.assertEqual(self.out["nbformat_minor"], 2)
    self.assertEqual(self.out["metadata"], self.train["metadata"])
    self.assertLen(self.out["cells"], len(self.train["cells"]))
    for old, new in zip(self.train["cells"], self.out["cells"]):
      self.assertEqual(sorted(old), sorted(new))
      for key in old:
        if key != "source" or old["cell_type"] != "code":
          self.assertEqual(old[key], new[key], key)
      # A list stays a list, a string a string.
      self.assertIs(type(old["source"]), type(new["source"]))

  def test_written_as_jupyter_writes_it(self):
    # Indent 1, keys sorted, non-ASCII as is, a final newline.
    self.assertEqual(self.out_bytes, _jupyter_bytes(self.out))
    self.assertIn("r\u00e9sum\u00e9".encode("utf-8"), self.out_bytes)

  def test_ipython_lines_are_kept_byte_for_byte(self):
    for old, new in zip(self.train["cells"], self.out["cells"]):
      if old["cell_type"] != "code":
        continue
      self.assertEqual(_magic_lines(old["source"]),
                       _magic_lines(new["source"]))
    changed = [i for i, (old, new) in enumerate(zip(self.train["cells"],
                                                    self.out["cells"]))
               if old != new]
    # The import goes with `import tensorflow...` in the first code cell.
    self.assertEqual(changed, [1, 3, 4])
    self.assertEqual(self.out["cells"][1]["source"][:3],
                     _TRAIN_CELLS[1][1][:3])

  def test_unchanged_notebook_is_copied_byte_for_byte(self):
    self.assertEqual(_read(os.path.join(self.outtree, "plain.ipynb")),
                     self.plain_bytes)

  def test_converted_cells_train_on_tf2(self):
    path = os.path.join(self.tmp, "train_cells.py")
    with open(path, "w", encoding="utf-8") as f:
      f.write(_program(self.out))
    values = util.last_json(util.run_python([path], cwd=self.tmp))
    expected = util.expected_values(_TRAIN_PROGRAM)
    self.assertEqual(values["scale"], expected["scale"])
    # Made by the converted statement of a `%time` line.
    self.assertEqual(values["fixed"], 3.0)
    for key in ("loss", "w", "b"):
      self.assertAllClose(values[key], expected[key], rtol=1e-5, atol=1e-6,
                          msg=key)

  def test_report_names_cells(self):
    text = self.report_text
    self.assertIn("nb/train.ipynb", text)
    where = _where(_TRAIN_CELLS, "ExponentialUpdateLossScaleManager")
    self.assertEqual(where, "cell 5, line 2")
    self.assertIn(
        "  {}: `tf.contrib.mixed_precision.ExponentialUpdateLossScaleManager`"
        " -> `contrib_mixed_precision.ExponentialUpdateLossScaleManager`"
        .format(where), text)
    self.assertIn(_where(_TRAIN_CELLS, "opt = tf.contrib"), text)
    # Counted as notebooks, not as Python files.
    self.assertIn("2 notebooks", text)
    self.assertNotIn("Python file", text.split("Total")[0])

  def test_infile_outfile_and_inplace(self):
    src = os.path.join(self.tree, "nb", "train.ipynb")
    out = os.path.join(self.tmp, "single.ipynb")
    report = os.path.join(self.tmp, "single.txt")
    proc = _command("--infile", src, "--outfile", out, "--reportfile",
                    report, cwd=self.tmp)
    self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
    self.assertEqual(_read(out), self.out_bytes)
    with open(report, encoding="utf-8") as f:
      text = f.read()
    self.assertIn("1 of 1 notebook will run", text)
    self.assertIn("cell 5, line 2", text)

    copy_path = os.path.join(self.tmp, "inplace.ipynb")
    shutil.copy(src, copy_path)
    proc = _command("--infile", copy_path, "--inplace", "--reportfile",
                    report, cwd=self.tmp)
    self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
    self.assertEqual(_read(copy_path), self.out_bytes)

    intree = os.path.join(self.tmp, "inplace_tree")
    shutil.copytree(self.tree, intree)
    proc = _command("--intree", intree, "--inplace", "--reportfile",
                    report, cwd=self.tmp)
    self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
    self.assertEqual(util.tree_files(intree), util.tree_files(self.outtree))

  def test_dry_run_writes_nothing_and_names_cells(self):
    before = util.tree_files(self.tree)
    proc = _command("--intree", self.tree, "--dry_run", cwd=self.tmp)
    self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
    self.assertEqual(util.tree_files(self.tree), before)
    self.assertIn("cell 5, line 2", proc.stdout)
    self.assertIn("1 file(s) would change", proc.stdout)

  def test_broken_notebooks_are_reported_and_copied(self):
    tree = os.path.join(self.tmp, "broken")
    os.mkdir(tree)
    files = {
        "truncated.ipynb": self.train_bytes[:200],
        "v3.ipynb": json.dumps({"nbformat": 3, "nbformat_minor": 0,
                                "worksheets": [], "metadata": {}}).encode(),
        "py2.ipynb": _jupyter_bytes(_notebook([
            ("markdown", "old"),
            ("code", "import tensorflow as tf\n"
                     "opt = tf.contrib.mixed_precision.LossScaleOptimizer\n"
                     "print 'hello'\n")])),
        "latin1.ipynb": b'{"cells": [], "metadata": {}, "x": "\xe9"}',
        "list.ipynb": b"[1, 2]\n",
    }
    for name, data in files.items():
      with open(os.path.join(tree, name), "wb") as f:
        f.write(data)
    out = os.path.join(self.tmp, "broken_out")
    report = os.path.join(self.tmp, "broken.txt")
    proc = _command("--intree", tree, "--outtree", out, "--reportfile",
                    report, cwd=self.tmp)
    self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
    self.assertNotIn("Traceback", proc.stderr)
    self.assertEqual(util.tree_files(out), files)
    with open(report, encoding="utf-8") as f:
      text = f.read()
    lines = {name: [l for l in text.splitlines()
                    if l.startswith(name + ": NOT CONVERTED")]
             for name in files}
    for name, found in lines.items():
      self.assertLen(found, 1, "{} in:\n{}".format(name, text))
    self.assertIn("not valid JSON", lines["truncated.ipynb"][0])
    self.assertIn("nbformat 3", lines["v3.ipynb"][0])
    self.assertIn("syntax error at cell 2, line 3", lines["py2.ipynb"][0])
    self.assertIn("tf.contrib.mixed_precision", lines["py2.ipynb"][0])
    self.assertIn("UTF-8", lines["latin1.ipynb"][0])
    self.assertIn("not a JSON object", lines["list.ipynb"][0])

  def test_ipython_syntax_where_python_allows_it_is_python(self):
    # `%` inside brackets is the modulo operator, `!` inside a string is
    # text; a magic after an indented block is at top level; a future
    # import opens its cell; top-level `await` is IPython's.
    cells = [
        ("code", "import tensorflow as tf\nx = (7\n% 2)\ns = \"\"\"\n!x\n"
                 "\"\"\"\nfiles = !ls\nif x:\n    !a\n!b\nif x:\n    !c"),
        ("code", "from __future__ import division\n"
                 "opt = tf.contrib.mixed_precision.LossScaleOptimizer\n"
                 "import asyncio\nawait asyncio.sleep(0)"),
    ]
    tree = os.path.join(self.tmp, "edge")
    os.mkdir(tree)
    with open(os.path.join(tree, "edge.ipynb"), "wb") as f:
      f.write(_jupyter_bytes(_notebook(cells)))
    out = os.path.join(self.tmp, "edge_out")
    report = os.path.join(self.tmp, "edge.txt")
    proc = _command("--intree", tree, "--outtree", out, "--reportfile",
                    report, cwd=self.tmp)
    self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
    converted = json.loads(_read(os.path.join(out, "edge.ipynb")))
    first, second = (c["source"] for c in converted["cells"])
    self.assertEqual(first, cells[0][1].replace(
        "import tensorflow as tf\n",
        "import tensorflow as tf\nimport contrib_mixed_precision\n"))
    self.assertEqual(second, cells[1][1].replace(
        "tf.contrib.mixed_precision", "contrib_mixed_precision"))

  def test_tf_upgrade_v2_converts_cells(self):
    tree = os.path.join(self.tmp, "tf1")
    os.mkdir(tree)
    notebook = _notebook(_TF1_CELLS)
    with open(os.path.join(tree, "tf1.ipynb"), "wb") as f:
      f.write(_jupyter_bytes(notebook))
    out = os.path.join(self.tmp, "tf1_out")
    report = os.path.join(self.tmp, "tf1.txt")
    proc = _command("--intree", tree, "--outtree", out, "--reportfile",
                    report, "--tf_upgrade_v2", cwd=self.tmp)
    self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
    data = _read(os.path.join(out, "tf1.ipynb"))
    converted = json.loads(data.decode("utf-8"))
    self.assertEqual(data, _jupyter_bytes(converted))
    cell = "".join(converted["cells"][1]["source"])
    self.assertIn("var_list=tf.compat.v1.trainable_variables())", cell)
    self.assertIn("contrib_mixed_precision.LossScaleOptimizer(", cell)
    self.assertIn("x = tf.compat.v1.placeholder(", cell)
    for old, new in zip(notebook["cells"], converted["cells"]):
      self.assertEqual(_magic_lines(old["source"]),
                       _magic_lines(new["source"]))
      self.assertEqual(old["outputs"], new["outputs"])
    with open(report, encoding="utf-8") as f:
      text = f.read()
    self.assertIn("tf_upgrade_v2 also changed this file", text)
    # Its findings are named by cell too (no line was added to that cell).
    self.assertIn("  output {}: tf_upgrade_v2 INFO: Renamed "
                  "'tf.trainable_variables'".format(
                      _where(_TF1_CELLS, "tf.trainable_variables")), text)
    path = os.path.join(self.tmp, "tf1_cells.py")
    with open(path, "w", encoding="utf-8") as f:
      f.write(_program(converted))
    values = util.last_json(util.run_python([path], cwd=self.tmp))
    expected = util.expected_values(_TF1_PROGRAM)
    self.assertEqual(values["scale"], expected["scale"])
    for key in ("loss", "w", "b"):
      self.assertAllClose(values[key], expected[key], rtol=1e-5, atol=1e-6,
                          msg=key)


if __name__ == "__main__":
  tf.test.main()
