# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""`contrib-mp-upgrade` on notebook cells that IPython reads, not Python.

What users put in notebooks and what git shows them: a use inside a
`%time`, `%timeit` or `%prun` line magic, a `%%writefile` cell, a cell
magic first line the added import must not push down, cells numbered alike
by `--check` and the report, and a notebook's non-code bytes (CRLF line
endings, `\\u00e9` escapes, `1.50`, a duplicate key) kept as they were.
Every expected text is written here, from the fixture's own strings
(`str.replace`, `str.find`, Python's own `compile` for a syntax error's
site), never by the package. The command runs in process (`cli.run`,
`check.check`): these tests need neither TensorFlow nor a subprocess.
"""

import json
import os
import shutil
import tempfile

from absl.testing import absltest

from contrib_mp_upgrade import check as check_lib
from contrib_mp_upgrade import cli

_OLD = "tf.contrib.mixed_precision."
_NEW = "contrib_mixed_precision."
_IMPORT = "import contrib_mixed_precision\n"


def _notebook(cells):
  """An nbformat 4 notebook (a dict) of `(kind, source)` pairs."""
  out = []
  for kind, source in cells:
    cell = {"cell_type": kind, "metadata": {}, "source": source}
    if kind == "code":
      cell["execution_count"] = None
      cell["outputs"] = []
    out.append(cell)
  return {"cells": out, "metadata": {"kernelspec": {
      "display_name": "Python 3", "language": "python", "name": "python3"}},
          "nbformat": 4, "nbformat_minor": 5}


def _jupyter(notebook):
  return (json.dumps(notebook, sort_keys=True, indent=1, ensure_ascii=False)
          + "\n").encode("utf-8")


def _lines(source):
  """A cell's lines, split after CR, LF or CRLF as IPython splits them."""
  return _text(source).splitlines(True)


def _text(source):
  return source if isinstance(source, str) else "".join(source)


class NotebookCellsTest(absltest.TestCase):

  def setUp(self):
    super().setUp()
    self.tmp = tempfile.mkdtemp(prefix="upgrade_notebook_cells_test_")
    self.addCleanup(shutil.rmtree, self.tmp, True)

  def _write(self, name, data):
    path = os.path.join(self.tmp, name)
    with open(path, "wb") as f:
      f.write(data if isinstance(data, bytes) else _jupyter(data))
    return path

  def _convert(self, name, data):
    """`(converted bytes, report text)` of a notebook written as `name`."""
    path = self._write(name, data)
    out = os.path.join(self.tmp, "out_" + name)
    report = os.path.join(self.tmp, name + ".txt")
    cli.run(infile=path, outfile=out, reportfile=report)
    with open(report, encoding="utf-8") as f:
      text = f.read()
    if not os.path.exists(out):
      return None, text
    with open(out, "rb") as f:
      return f.read(), text

  def _check(self, name, data):
    """`cell_N:line:col: ` of each finding (its message is checked apart)."""
    findings, checked = check_lib.check(files=[self._write(name, data)])
    self.assertEqual(checked, 1)
    self.messages = [f.message for f in findings]
    return ["cell_{}:{}:{}: ".format(f.cell, f.line, f.column)
            for f in findings]

  def _cells(self, data):
    return [_text(c["source"]) for c in json.loads(data)["cells"]]

  # Item 8: line magics, `%%writefile`, aliases of tf.contrib.

  def test_line_magics_are_converted_and_found_by_check(self):
    lines = [
        "import tensorflow as tf\n",
        "%time opt = tf.contrib.mixed_precision.LossScaleOptimizer(o, m)\n",
        "%timeit -n 1 -r1 m = tf.contrib.mixed_precision."
        "FixedLossScaleManager(2)\n",
        "for i in range(2):\n",
        "    %prun -l 3 -s cumulative f(tf.contrib.mixed_precision.X)\n",
        "x = 1"]
    notebook = _notebook([("markdown", "intro"), ("code", lines)])
    expected = [l.replace(_OLD, _NEW) for l in lines]
    expected.insert(1, _IMPORT)
    found = self._check("magic.ipynb", notebook)
    self.assertEqual(found, [
        "cell_2:{}:{}: ".format(i + 1, lines[i].find(_OLD) + 1)
        for i in (1, 2, 4)], found)
    data, report = self._convert("magic.ipynb", notebook)
    self.assertEqual(self._cells(data), ["intro", "".join(expected)])
    self.assertIn("cell 2, line 2: `tf.contrib.mixed_precision."
                  "LossScaleOptimizer`", report)
    self.assertIn("1 of 1 notebook will run", report)

  def test_magic_use_left_unconverted_is_warned_found_and_blocks(self):
    # A `%time` the command cannot read as Python (a `\\` continuation),
    # a shell line, and a `%%writefile` cell.
    cells = [
        ("code", "import tensorflow as tf\n"
                 "%time f(tf.contrib.mixed_precision.X, \\\n  2)\n"
                 "!python -c 'tf.contrib.mixed_precision.Y'"),
        ("code", "%%writefile a.py\nimport tensorflow as tf\n"
                 "tf.contrib.mixed_precision.LossScaleOptimizer\n")]
    found = self._check("left.ipynb", _notebook(cells))
    self.assertEqual(found, ["cell_1:2:1: ", "cell_1:4:1: ", "cell_2:1:1: "])
    for message in self.messages:
      self.assertIn("not converted", message)
    data, report = self._convert("left.ipynb", _notebook(cells))
    self.assertIn(data, (None, _jupyter(_notebook(cells))))
    self.assertIn("0 of 1 notebook will run", report)
    for where in ("cell 1, line 2", "cell 1, line 4", "cell 2, line 1"):
      self.assertIn("left.ipynb {}: WARNING".format(where), report)

  def test_cell_that_starts_with_a_contrib_alias_converts_as_python(self):
    for alias, name in (("contrib = tf.contrib\n", "contrib"),
                        ("import tensorflow.contrib as tfc\n", "tfc")):
      use = "opt = {}.mixed_precision.LossScaleOptimizer(o, m)".format(name)
      notebook = _notebook([("code", "import tensorflow as tf"),
                            ("markdown", "m"), ("code", alias + use)])
      self.assertEqual(self._check("alias.ipynb", notebook), [
          "cell_3:1:1: ", "cell_3:2:7: "])
      data, report = self._convert("alias.ipynb", notebook)
      self.assertNotIn("NOT CONVERTED", report)
      self.assertEqual(self._cells(data), [
          "import tensorflow as tf\n" + _IMPORT.rstrip("\n"), "m",
          "opt = contrib_mixed_precision.LossScaleOptimizer(o, m)"])
    # A `%time` alias that the conversion removes goes with its magic, as
    # the line goes from a .py file; one it keeps stays timed.
    notebook = _notebook([("code", [
        "import tensorflow as tf\n",
        "%time contrib = tf.contrib\n",
        "%time mp = tf.contrib.mixed_precision\n",
        "opt = contrib.mixed_precision.LossScaleOptimizer(o, mp.X)"])])
    self.assertEqual(self._check("alias.ipynb", notebook), [
        "cell_1:2:7: ", "cell_1:3:12: ", "cell_1:4:7: "])
    data, report = self._convert("alias.ipynb", notebook)
    self.assertNotIn("NOT CONVERTED", report)
    self.assertEqual(self._cells(data), [
        "import tensorflow as tf\n" + _IMPORT +
        "%time mp = contrib_mixed_precision\n"
        "opt = contrib_mixed_precision.LossScaleOptimizer(o, mp.X)"])

  # Item 9: one numbering of cells.

  def test_check_and_report_count_every_cell(self):
    code = "import tensorflow as tf\nx = tf.contrib.mixed_precision.X\n"
    notebook = _notebook([("markdown", "a"), ("raw", "b"), ("code", "y = 1"),
                          ("code", code)])
    self.assertEqual(self._check("count.ipynb", notebook),
                     ["cell_4:2:5: "])
    _, report = self._convert("count.ipynb", notebook)
    self.assertIn("cell 4, line 2: `tf.contrib.mixed_precision.X`", report)

  def test_syntax_error_is_named_at_its_cell_line_and_column(self):
    bad = "import tensorflow as tf\nx = tf.contrib.mixed_precision.X\n" \
          "y = (1 +* 2)\n"
    try:
      compile(bad, "<cell>", "exec")
    except SyntaxError as e:
      line, column = e.lineno, e.offset
    notebook = _notebook([("markdown", "a"), ("markdown", "b"),
                          ("code", "x = 1"), ("code", bad)])
    found = self._check("syntax.ipynb", notebook)
    self.assertEqual(found, ["cell_4:{}:{}: ".format(line, column)])
    self.assertTrue(self.messages[0].startswith("error: "), self.messages)
    _, report = self._convert("syntax.ipynb", notebook)
    self.assertIn("cell 4, line {}".format(line), report)

  # Item 11: only code cells' source changes.

  def test_non_code_bytes_are_kept(self):
    # Written by hand: CRLF, three-space indent, keys out of order,
    # duplicate keys (the last counts, as in `json.loads`), escapes, `1.50`,
    # a string source and a list source.
    text = (
        '{\n'
        '   "metadata": {"kernelspec": {"language": "python"}, '
        '"x": 1, "x": 2.50, "note": "caf\\u00e9 \\/ \\u00E9"},\n'
        '   "nbformat": 4,\n'
        '   "nbformat_minor": 2,\n'
        '   "cells": [\n'
        '      {"source": "# \\u00e9t\\u00e9\\n", "cell_type": "markdown",'
        ' "metadata": {}},\n'
        '      {\n'
        '         "cell_type": "code",\n'
        '         "outputs": [{"output_type": "stream", "name": "stdout",'
        ' "text": ["r\\u00e9sum\\u00e9 1.50\\n"]}],\n'
        '         "execution_count": 1.0,\n'
        '         "source": [\n'
        '            "import tensorflow as tf\\n",\n'
        '            "# na\\u00efve\\n",\n'
        '            "opt = tf.contrib.mixed_precision.LossScaleOptimizer'
        '(o, m)"\n'
        '         ],\n'
        '         "metadata": {"scrolled": true, "scrolled": false}\n'
        '      },\n'
        '      {"cell_type": "code", "source": "x = 2", "metadata": {}, '
        '"outputs": [], '
        '"execution_count": null, "source": "m = tf.contrib.mixed_precision.'
        'FixedLossScaleManager(2.50)\\r\\nx = 1\\r\\n"}\n'
        '   ]\n'
        '}').replace("\n", "\r\n")
    expected = text.replace(
        '"import tensorflow as tf\\n",\r\n',
        '"import tensorflow as tf\\n",\r\n'
        '            "import contrib_mixed_precision\\n",\r\n').replace(
            _OLD, _NEW)
    self.assertNotEqual(expected, text)
    data, report = self._convert("bytes.ipynb", text.encode("ascii"))
    self.assertNotIn("NOT CONVERTED", report)
    self.assertEqual(data.decode("utf-8"), expected)
    # With a BOM and raw UTF-8, a changed line keeps its raw `é`.
    raw = ("\ufeff" + json.dumps(_notebook([("code", [
        "import tensorflow as tf  # \u00e9\n",
        "x = tf.contrib.mixed_precision.X  # \u00e9"])]), indent=2,
                                ensure_ascii=False)).encode("utf-8")
    data, _ = self._convert("bom.ipynb", raw)
    self.assertEqual(data, raw.decode("utf-8").replace(
        '# \u00e9\\n",\n', '# \u00e9\\n",\n        "{}\\n",\n'.format(
            _IMPORT.strip())).replace(_OLD, _NEW).encode("utf-8"))

  def test_compact_notebook_stays_compact(self):
    # One line of JSON, as `json.dumps` writes it: sources of one line
    # each, without a final newline.
    text = json.dumps(_notebook([
        ("code", ["import tensorflow as tf"]),
        ("code", ["x = tf.contrib.mixed_precision.X"])])) + "\n"
    expected = text.replace(
        '["import tensorflow as tf"]',
        '["import tensorflow as tf\\n", "import contrib_mixed_precision"]'
    ).replace(_OLD, _NEW)
    data, _ = self._convert("compact.ipynb", text.encode("ascii"))
    self.assertEqual(data.decode("ascii"), expected)

  # Item 12: nothing above a cell magic; a non-Python cell untouched.

  def test_import_never_lands_above_a_cell_magic(self):
    use = "opt = tf.contrib.mixed_precision.LossScaleOptimizer(o, m)"
    cases = [
        ([("code", "%%capture\n!pip install contrib_mixed_precision"),
          ("code", "%%bash\necho hi"), ("code", "%%time\n" + use)],
         ["%%capture\n!pip install contrib_mixed_precision",
          "%%bash\necho hi",
          "%%time\n" + _IMPORT + use.replace(_OLD, _NEW)]),
        ([("code", "%%bash\necho hi"), ("code", use)],
         ["%%bash\necho hi", _IMPORT + use.replace(_OLD, _NEW)]),
        ([("code", ["%%capture\n", "import tensorflow as tf\n", use])],
         ["%%capture\nimport tensorflow as tf\n" + _IMPORT +
          use.replace(_OLD, _NEW)]),
        # Into the first cell converted, not the first Python cell.
        ([("code", "x = 1"), ("code", use)],
         ["x = 1", _IMPORT + use.replace(_OLD, _NEW)]),
    ]
    for cells, expected in cases:
      data, report = self._convert("magic.ipynb", _notebook(cells))
      self.assertEqual(self._cells(data), expected)
      self.assertIn("1 of 1 notebook will run", report)


  # Issue 52, item 12: the kernel's language as notebooks spell it.

  def test_a_python3_kernel_language_is_python(self):
    # Some notebooks' kernelspec says "python3" (the kernel's name) where
    # Jupyter writes "python": the notebook was skipped, yet counted as
    # ready, and `--check` said nothing.
    lines = ["import tensorflow as tf\n",
             "m = tf.contrib.mixed_precision.FixedLossScaleManager(8.0)\n"]
    for language in ("python3", "Python3", "python 3", "ipython3"):
      notebook = _notebook([("markdown", "intro"), ("code", lines)])
      notebook["metadata"]["kernelspec"]["language"] = language
      with self.subTest(language=language):
        self.assertEqual(self._check("p3.ipynb", notebook),
                         ["cell_2:2:{}: ".format(lines[1].find(_OLD) + 1)])
        data, report = self._convert("p3.ipynb", notebook)
        self.assertEqual(self._cells(data), [
            "intro", "import tensorflow as tf\n" + _IMPORT +
            lines[1].replace(_OLD, _NEW)])
        self.assertIn("1 of 1 notebook will run", report)

  def test_a_use_in_another_languages_notebook_is_not_ready(self):
    # An R notebook is not converted; one that uses the API must not be
    # counted as ready, and `--check` must fail on it.
    use = "m <- tf$contrib$mixed_precision$FixedLossScaleManager(8)\n"
    notebook = _notebook([("code", "library(tensorflow)\n" + use)])
    notebook["metadata"]["kernelspec"]["language"] = "R"
    findings, _ = check_lib.check(files=[self._write("r.ipynb", notebook)])
    self.assertLen(findings, 1)
    self.assertTrue(findings[0].is_error, findings[0])
    self.assertIn("'R'", findings[0].message)
    data, report = self._convert("r.ipynb", notebook)
    self.assertEqual(data, _jupyter(notebook))
    self.assertIn("0 of 1 notebook will run", report)
    self.assertIn("r.ipynb: NOT CONVERTED: ", report)
    # Without a use there is nothing to say.
    notebook = _notebook([("code", "library(ggplot2)\n")])
    notebook["metadata"]["kernelspec"]["language"] = "R"
    self.assertEqual(self._check("plain_r.ipynb", notebook), [])


  # Issue 52, item 13: a cell whose lines end in CR alone (classic Mac OS,
  # some editors' pastes).

  def test_cell_with_cr_line_ends_is_converted_and_keeps_them(self):
    use = "m = tf.contrib.mixed_precision.FixedLossScaleManager(8.0)"
    plain = "import tensorflow as tf\n" + use + "\n"
    for source in ("import tensorflow as tf\r" + use + "\r",
                   ["import tensorflow as tf\r", use + "\r"],
                   ["%time x = 1\r", "import tensorflow as tf\r", use]):
      notebook = _notebook([("markdown", "intro"), ("code", source),
                            ("code", plain)])
      with self.subTest(source=source):
        self.assertEqual(self._check("cr.ipynb", notebook), [
            "cell_2:{}:5: ".format(len(_lines(source))),
            "cell_3:2:5: "])
        data, report = self._convert("cr.ipynb", notebook)
        self.assertIsNotNone(data, report)
        text = _text(source)
        head = text[:text.index("import tensorflow as tf\r") + 24]
        self.assertEqual(self._cells(data), [
            "intro",
            head + _IMPORT.replace("\n", "\r") +
            text[len(head):].replace(_OLD, _NEW),
            plain.replace(_OLD, _NEW)])
        if isinstance(source, list):
          # One item a line, as Jupyter writes it, unchanged ones kept.
          cell = json.loads(data)["cells"][1]["source"]
          self.assertEqual(cell[:len(source) - 1], source[:-1])
          self.assertLen(cell, len(source) + 1)
        self.assertIn("1 of 1 notebook will run", report)

  def test_cell_with_mixed_line_ends_is_named(self):
    # A lone CR among LF line ends: not converted, and the cell and line
    # are named (libcst's own message named neither).
    source = ("import tensorflow as tf\n"
              "x = 1\rm = tf.contrib.mixed_precision.FixedLossScaleManager("
              "8.0)\n")
    notebook = _notebook([("markdown", "intro"), ("code", source)])
    data, report = self._convert("mixed.ipynb", notebook)
    self.assertEqual(data, _jupyter(notebook))
    self.assertIn("mixed.ipynb: NOT CONVERTED: a CR alone ends cell 2, line "
                  "2, among LF line ends", report)
    findings, _ = check_lib.check(files=[self._write("mixed.ipynb",
                                                     notebook)])
    self.assertEqual([(f.cell, f.line, f.is_error) for f in findings],
                     [(2, 2, True)])


if __name__ == "__main__":
  absltest.main()
