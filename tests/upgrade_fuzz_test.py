# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""A fuzz test of `contrib-mp-upgrade`: mangled files and names, every mode.

Each round writes one tree of generated files: TF1 mixed-precision sources
written here, truncated at random points, with bytes flipped, inserted and
deleted, in odd encodings (a byte-order mark, latin-1 bytes, UTF-16, coding
cookies that lie, NUL bytes, CR-only line ends, form feeds, tabs mixed with
spaces, very long lines, deep nesting), random bytes, and notebooks (valid,
mutated, not JSON, huge); under odd names (bytes that are not UTF-8,
spaces, a newline, leading dashes, a directory named `x.py`), beside a FIFO
named `x.py`, a link to `/dev/zero` and a dangling link. The real command
runs on it as a subprocess with a timeout in every mode (`--outtree`,
`--inplace` on a copy, `--dry_run`, `--infile`, `--check`), and each run
must end with a documented status and no traceback, and say what it did
consistently: the report's counts agree with each other, with the one-line
summary and with the tree (files read, files whose bytes changed, files
that Python itself cannot parse), the output holds exactly the input's
paths, and no staging tree or temporary file is left anywhere.

The seed is fixed, so a failure repeats. To run longer by hand:
`CMP_FUZZ_SEED=7 CMP_FUZZ_ROUNDS=20 python -m pytest
tests/upgrade_fuzz_test.py` (and `CMP_FUZZ_FILES`, files per tree).
"""

import ast
import json
import os
import random
import re
import resource
import shutil
import stat
import subprocess
import sys
import tempfile

from absl.testing import absltest

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SEED = int(os.environ.get("CMP_FUZZ_SEED", "20261125"))
_ROUNDS = int(os.environ.get("CMP_FUZZ_ROUNDS", "3"))
_FILES = int(os.environ.get("CMP_FUZZ_FILES", "100"))
# Seconds per command: far above what a round needs.
_TIMEOUT = int(os.environ.get("CMP_FUZZ_TIMEOUT", "300"))
# What temporary and staging names contain; no input name does.
_LITTER = b"contrib-mp-upgrade"

# TF1 sources as legacy trees have them, one import style each.
_SOURCES = [
    """import tensorflow as tf


def build(loss):
  manager = tf.contrib.mixed_precision.ExponentialUpdateLossScaleManager(
      128, 2, 2, 2, 0.5)
  opt = tf.contrib.mixed_precision.LossScaleOptimizer(
      tf.train.GradientDescentOptimizer(0.1), manager)
  return opt.minimize(loss, var_list=tf.trainable_variables())
""",
    """from tensorflow.contrib.mixed_precision import (
    FixedLossScaleManager,  # the fixed one
    LossScaleOptimizer,
)
import tensorflow as tf

opt = LossScaleOptimizer(tf.train.AdamOptimizer(), FixedLossScaleManager(8))
""",
    """import tensorflow as tf
from tensorflow.contrib import mixed_precision as mp
from tensorflow.contrib import layers

class Model(object):
  def __init__(self):
    self.manager = mp.FixedLossScaleManager(2 ** 10)

  def head(self, x):
    return layers.fully_connected(x, 10)

  def optimizer(self):
    try:
      return mp.LossScaleOptimizer(tf.train.MomentumOptimizer(0.1, 0.9),
                                   self.manager)
    except ImportError:
      return None
""",
    """import tensorflow.contrib.mixed_precision as mp_lib
import tensorflow as tf

if int(tf.__version__.split(".")[0]) < 2:
  LSO = mp_lib.LossScaleOptimizer
else:
  LSO = None
x = tf.layers.dense(tf.placeholder(tf.float32, [None, 3]), 1)
""",
    """# -*- coding: utf-8 -*-
\"\"\"Trains it: d\u00e9j\u00e0 vu, \u65e5\u672c.\"\"\"
import importlib
import tensorflow as tf

contrib = tf.contrib
lsm = importlib.import_module(
    "tensorflow.contrib.mixed_precision.python.loss_scale_manager")
opt = contrib.mixed_precision.LossScaleOptimizer(
    tf.train.GradientDescentOptimizer(1.0),
    lsm.ExponentialUpdateLossScaleManager(2 ** 15, 1000))
with tf.Session() as sess:
  sess.run(tf.global_variables_initializer())
""",
    """import numpy as np


def feed(x, y, bad=False):
  data = np.ones([4, 1], np.float32)
  if bad:
    data[0, 0] = np.inf
  return {x: data, y: 2 * data}
""",
    """import tensorflow as tf
slim = tf.contrib.slim
net = slim.conv2d(tf.zeros([1, 8, 8, 3]), 4, [3, 3])
""",
]


def _notebook(cells):
  """An nbformat 4 notebook of `(kind, text)` cells, as JSON bytes."""
  return json.dumps({
      "nbformat": 4, "nbformat_minor": 5,
      "metadata": {"kernelspec": {"name": "python3", "language": "python",
                                  "display_name": "Python 3"},
                   "language_info": {"name": "python"}},
      "cells": [{"cell_type": kind, "metadata": {}, "source": text,
                 **({"outputs": [], "execution_count": None}
                    if kind == "code" else {})}
                for kind, text in cells]}, indent=1).encode("utf-8")


class _Maker:
  """Makes file contents and names from one `random.Random`."""

  def __init__(self, rng):
    self.rng = rng

  def source(self) -> str:
    return self.rng.choice(_SOURCES)

  def mutate(self, data: bytes) -> bytes:
    """Bytes flipped, inserted, deleted or repeated, a few times."""
    rng = self.rng
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
      if not data:
        data += bytes([rng.randrange(256)])
      at = rng.randrange(len(data))
      kind = rng.randrange(5)
      if kind == 0:
        data[at] ^= 1 << rng.randrange(8)
      elif kind == 1:
        data[at:at] = bytes(rng.randrange(256)
                            for _ in range(rng.randint(1, 4)))
      elif kind == 2:
        del data[at:at + rng.randint(1, 20)]
      elif kind == 3:
        span = data[at:at + rng.randint(1, 40)]
        data[at:at] = span
      else:
        data[at:at] = rng.choice([b"(", b")", b"\"", b"'''", b":", b"\\",
                                  b"\t", b"\x00", b"\r", b"\x0c", b"\xef"
                                  b"\xbb\xbf", b"\xe9", b"\n  ", b"#"])
    return bytes(data)

  def content(self) -> bytes:
    """One `*.py` file's bytes."""
    rng = self.rng
    text = self.source()
    kind = rng.randrange(22)
    if kind == 0:
      return bytes(rng.randrange(256) for _ in range(rng.randint(0, 300)))
    if kind in (1, 2, 3):
      data = text.encode("utf-8")
      return data[:rng.randint(0, len(data))]
    if kind in (4, 5, 6, 7):
      return self.mutate(text.encode("utf-8"))
    if kind == 8:
      return b"\xef\xbb\xbf" + text.encode("utf-8")
    if kind == 9:
      return ("# coding: latin-1\n# caf\u00e9\n" + text).encode("latin-1",
                                                                 "replace")
    if kind == 10:
      return text.replace("import tensorflow as tf",
                          "import tensorflow as tf  # caf\xe9").encode(
                              "latin-1", "replace")
    if kind == 11:
      return text.encode(rng.choice(["utf-16", "utf-16-le", "utf-32"]))
    if kind == 12:
      # Cookies that lie: latin-1 said, UTF-8 written; or no such codec.
      cookie = rng.choice(["# -*- coding: latin-1 -*-", "# coding=utf-16",
                           "# vim: set fileencoding=klingon :",
                           "# coding: ascii", "# coding: utf-8"])
      body = text.encode("utf-8")
      if rng.random() < 0.5:
        body += "s = 'd\u00e9j\u00e0'\n".encode("latin-1")
      return cookie.encode() + b"\n" + body
    if kind == 13:
      data = text.encode("utf-8")
      at = rng.randint(0, len(data))
      return data[:at] + b"\x00" + data[at:]
    if kind == 14:
      return text.replace("\n", rng.choice(["\r", "\r\n"])).encode()
    if kind == 15:
      return text.replace("\n\n", "\n\x0c\n").replace(
          "\n  ", rng.choice(["\n\t", "\n \t", "\n\x0c  "])).encode()
    if kind == 16:
      long = "x = [" + ", ".join(str(i) for i in range(
          rng.randint(200, 3000))) + "]\n"
      return (text + long + "# " + "z" * rng.randint(1000, 100000) +
              "\n").encode()
    if kind == 17:
      depth = rng.choice([30, 90, 150, 400, 1200])
      nest = rng.choice(["(" * depth + "1" + ")" * depth,
                         "[" * depth + "]" * depth,
                         "-" * depth + "1",
                         "+".join(["a"] * depth)])
      return (text + "y = " + nest + "\n").encode()
    if kind == 18:
      depth = rng.choice([20, 60, 101])
      lines = ["import tensorflow as tf\n"]
      for i in range(depth):
        lines.append(" " * i + "if True:\n")
      lines.append(" " * depth + "o = tf.contrib.mixed_precision."
                   "LossScaleOptimizer(None, None)\n")
      return "".join(lines).encode()
    if kind == 19:
      data = text.encode("utf-8")
      return data[:rng.randint(0, len(data))] + self.mutate(data)[
          rng.randint(0, len(data)):]
    return text.encode("utf-8")

  def notebook(self) -> bytes:
    """One `*.ipynb` file's bytes."""
    rng = self.rng
    cells = [("markdown", "# Train\nd\u00e9j\u00e0")]
    for _ in range(rng.randint(1, 4)):
      code = self.source()
      if rng.random() < 0.3:
        code = "%matplotlib inline\n!pip install x\n" + code
      if rng.random() < 0.2:
        code = code[:rng.randint(0, len(code))]
      cells.append(("code", code))
    data = _notebook(cells)
    kind = rng.randrange(10)
    if kind == 0:
      return data[:rng.randint(0, len(data))]
    if kind == 1:
      return self.mutate(data)
    if kind == 2:
      return self.source().encode()  # Python, not JSON.
    if kind == 3:
      return rng.choice([b"[]", b"null", b"{}", b'{"nbformat": 3}',
                         b'{"nbformat": 4, "cells": {}}', b"[" * 100000,
                         b'{"nbformat": 4, "cells": [{"cell_type": 1}]}',
                         b"\xef\xbb\xbf" + data, data.decode().encode(
                             "utf-16")])
    if kind == 4:
      # A huge notebook: an output of a few megabytes.
      big = json.loads(data)
      big["cells"][-1]["outputs"] = [{
          "output_type": "stream", "name": "stdout",
          "text": ["x" * 1000 + "\n"] * rng.randint(500, 3000)}]
      return json.dumps(big).encode()
    return data

  def name(self, notebook: bool) -> bytes:
    rng = self.rng
    suffix = b".ipynb" if notebook else b".py"
    stem = rng.choice([
        b"train", b"caf\xe9", b"\xff\xfe", b"with space", b"new\nline",
        b"-rf", b"--help", b"-", b".hidden", b"tab\there", b"back\\slash",
        b"colon:1:2", b"percent%s{0}", b"quote'\"", b"\xf0\x9f\x98\x80",
        b"\x1b[31mred", b"WARNING: x", b"", b".", b"a" * 200, b"model",
        b"__init__", b"x.py"])
    return stem + b"_" + str(rng.randrange(10 ** 6)).encode() + suffix


def _walk(root: bytes):
  """{relative bytes path: (kind, bytes or link target)} under `root`."""
  out = {}
  stack = [b""]
  while stack:
    prefix = stack.pop()
    for name in os.listdir(os.path.join(root, prefix) if prefix else root):
      rel = os.path.join(prefix, name) if prefix else name
      path = os.path.join(root, rel)
      mode = os.lstat(path).st_mode
      if stat.S_ISLNK(mode):
        out[rel] = ("link", os.readlink(path))
      elif stat.S_ISDIR(mode):
        out[rel] = ("dir", None)
        stack.append(rel)
      elif stat.S_ISREG(mode):
        with open(path, "rb") as f:
          out[rel] = ("file", f.read())
      else:
        out[rel] = ("special", None)
  return out


def _litter(root: bytes):
  return sorted(rel for rel in _walk(root) if _LITTER in rel)


def _python_parses(data: bytes) -> bool:
  try:
    compile(data, "<fuzz>", "exec", ast.PyCF_ONLY_AST)
  except (SyntaxError, ValueError):
    return False
  except (RecursionError, MemoryError):
    return True  # Too deep for this parser; a person cannot fix that.
  return True


def _counts(report: str, test):
  """The report's numbers, each checked against the others."""
  total = re.search(
      r"^(Python files|Notebooks|Python files and notebooks): (\d+) read, "
      r"(\d+) converted, (\d+) not parsed; other files and links: (\d+); "
      r"skipped: (\d+)\.$", report, re.M)
  test.assertIsNotNone(total, report[-3000:])
  kinds, read, converted, failed, others, skipped = (
      total.group(1),) + tuple(int(x) for x in total.groups()[1:])
  warnings = re.search(r"^Warnings to review: (\d+) in (\d+) files?\.$",
                       report, re.M)
  test.assertIsNotNone(warnings)
  n_warnings, warned = int(warnings.group(1)), int(warnings.group(2))
  test.assertLessEqual(warned, n_warnings)
  test.assertLessEqual(warned, read - failed)
  header = re.search(r"^Converted \(.*\): (\d+) files?$", report, re.M)
  test.assertEqual(int(header.group(1)) if header else 0, converted)
  test.assertEqual(report.count(": NOT CONVERTED: "), failed, report)
  # Before you run it: "X of N ..." with N the files read, split by kind.
  before = re.search(r"^(\d+) of (\d+) (Python files?|notebooks?|files "
                     r"\((\d+) Python files?, (\d+) notebooks?\)) will run",
                     report, re.M)
  test.assertIsNotNone(before, report[:3000])
  clear, listed = int(before.group(1)), int(before.group(2))
  test.assertEqual(listed, read)
  if before.group(4) is not None:
    python, notebooks = int(before.group(4)), int(before.group(5))
    test.assertEqual(python + notebooks, read)
    test.assertEqual(kinds, "Python files and notebooks")
  elif before.group(3).startswith("notebook"):
    python, notebooks = 0, read
    test.assertEqual(kinds, "Notebooks")
  else:
    python, notebooks = read, 0
    test.assertEqual(kinds, "Python files")
  blocked = [int(m.group(1)) for m in re.finditer(
      r"^  - .+?: (\d+) files?, \d+ uses? \(first: ", report, re.M)]
  if blocked:
    test.assertLessEqual(clear + max(blocked), read - failed)
  else:
    test.assertEqual(clear, read - failed, report[:3000])
  todo = report[report.index("\nLeft to do by hand:"):]
  if failed:
    test.assertIn("fix the {} file".format(failed), todo)
  if n_warnings:
    test.assertIn("read the {} warning".format(n_warnings), todo)
  if skipped:
    test.assertIn("check the {} skipped path".format(skipped), todo)
  return dict(read=read, converted=converted, failed=failed, others=others,
              skipped=skipped, warnings=n_warnings, python=python,
              notebooks=notebooks)


class UpgradeFuzzTest(absltest.TestCase):

  def setUp(self):
    super().setUp()
    self.root = os.fsencode(tempfile.mkdtemp(prefix="upgrade_fuzz_"))
    self.addCleanup(shutil.rmtree, self.root, ignore_errors=True)

  def _run(self, cwd, *argv, file_size=None, timeout=_TIMEOUT):
    def limit():
      if file_size is not None:  # Python ignores SIGXFSZ: writes fail.
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [_REPO] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    try:
      proc = subprocess.run(
          [sys.executable, "-m", "contrib_mp_upgrade"] + list(argv),
          cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
          stdin=subprocess.DEVNULL, timeout=timeout, check=False,
          preexec_fn=limit)
    except subprocess.TimeoutExpired:
      self.fail("hung: no exit in {} s: {!r} (seed {})".format(
          timeout, argv, _SEED))
    if os.environ.get("CMP_FUZZ_VERBOSE"):
      print(argv, resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime,
            file=sys.stderr)
    out = proc.stdout.decode("utf-8", "surrogateescape")
    err = proc.stderr.decode("utf-8", "surrogateescape")
    what = "{!r} (seed {}):\n{}\n{}".format(argv, _SEED, err[-3000:],
                                            out[-2000:])
    self.assertNotIn("Traceback", out + err, what)
    self.assertIn(proc.returncode, (0, 1, 2), what)
    return proc.returncode, out, err, what

  def _tree(self, maker, top):
    """Writes a tree under `top`; returns what the command should skip."""
    rng = maker.rng
    dirs = [b"", b"pkg", b"pkg/sub dir", b"caf\xe9", b"-x", b"dir.py",
            b"nb.ipynb", b"deep/" + b"/".join([b"d"] * 30)]
    for d in dirs[1:]:
      os.makedirs(os.path.join(top, d), exist_ok=True)
    for _ in range(_FILES):
      notebook = rng.random() < 0.15
      path = os.path.join(top, rng.choice(dirs), maker.name(notebook))
      with open(path, "wb") as f:
        f.write(maker.notebook() if notebook else maker.content())
    # Enough lines for worker processes (`--jobs 2`), as a large tree has.
    with open(os.path.join(top, b"pkg", b"big.py"), "wb") as f:
      f.write(_SOURCES[0].encode() + b"a = 1\n" * 4000)
    with open(os.path.join(top, b"notes.txt"), "wb") as f:
      f.write(b"not code \xff\n")
    os.symlink(b"pkg", os.path.join(top, b"pkg_link"))
    os.symlink(b"notes.txt", os.path.join(top, b"notes_link.py"))
    os.mkfifo(os.path.join(top, b"fifo.py"))
    os.symlink(b"/dev/zero", os.path.join(top, b"zero.py"))
    os.symlink(b"missing.py", os.path.join(top, b"dangling.py"))
    return {b"fifo.py", b"zero.py", b"dangling.py"}

  def test_a_nul_byte_in_a_string_is_named(self):
    # Found by the fuzz test: libcst parses a NUL byte inside a string
    # literal, which Python refuses anywhere in a source; the command then
    # died in `ast.literal_eval` with a traceback.
    work = os.path.join(self.root, b"nul")
    top = os.path.join(work, b"in")
    os.makedirs(top)
    data = (b"import tensorflow as tf\ns = 'a\x00b'\n"
            b"opt = tf.contrib.mixed_precision.LossScaleOptimizer(None, 8)\n")
    with open(os.path.join(top, b"train.py"), "wb") as f:
      f.write(data)
    status, stdout, _, what = self._run(work, b"--intree", b"in",
                                        b"--outtree", b"out")
    self.assertEqual(status, 0, what)
    with open(os.path.join(work, b"out", b"train.py"), "rb") as f:
      self.assertEqual(f.read(), data)  # Copied unchanged.
    with open(os.path.join(work, b"contrib_mp_upgrade_report.txt")) as f:
      self.assertIn(
          "train.py: NOT CONVERTED: it contains a NUL byte (at line 2)",
          f.read())
    status, stdout, _, what = self._run(work, b"--check", b"in")
    self.assertEqual(status, 1, what)
    self.assertIn(
        "in/train.py:2:1: error: it contains a NUL byte (at line 2)", stdout)

  def test_a_failed_write_leaves_no_directories(self):
    # Found by hand: the directories made for `--outtree`, `--outfile` and
    # `--reportfile` stayed after a failed write that said "nothing was
    # written". A limit on file size makes the write fail (EFBIG), as a
    # full disk does, without needing one.
    work = os.path.join(self.root, b"full")
    top = os.path.join(work, b"in")
    os.makedirs(top)
    data = (b"import tensorflow as tf\n"
            b"opt = tf.contrib.mixed_precision.LossScaleOptimizer(None, 8)\n"
            b"# " + b"x" * 20000 + b"\n")
    with open(os.path.join(top, b"train.py"), "wb") as f:
      f.write(data)
    for argv in ([b"--intree", b"in", b"--outtree", b"new/a/b/out"],
                 [b"--infile", b"in/train.py", b"--outfile", b"new/c/t.py"],
                 [b"--infile", b"in/train.py", b"--outfile", b"t.py",
                  b"--reportfile", b"new/d/report.txt"]):
      status, _, err, what = self._run(work, *argv, file_size=4096)
      self.assertEqual(status, 1, what)
      self.assertIn("Nothing was written", err)
      self.assertEqual(sorted(os.listdir(work)), [b"in"], what)
      self.assertEqual(_walk(top), {b"train.py": ("file", data)})

  def test_check_on_a_fifo_or_a_device(self):
    # Found by hand: `--check x.py` read a FIFO named `x.py` forever, and a
    # link to /dev/zero until memory ran out (a MemoryError traceback). A
    # check must not pass on a file it never read, so each is an error.
    work = os.path.join(self.root, b"special")
    os.makedirs(work)
    os.mkfifo(os.path.join(work, b"x.py"))
    os.symlink(b"/dev/zero", os.path.join(work, b"z.py"))
    for name in (b"x.py", b"z.py"):
      status, stdout, _, what = self._run(work, b"--check", name,
                                          timeout=60)
      self.assertEqual(status, 1, what)
      self.assertIn(name.decode() + ":1:1: error: not a regular file",
                    stdout, what)

  def test_a_device_as_reportfile_or_outfile_is_written_to(self):
    # Found by hand: `--reportfile /dev/null` (no report wanted) renamed a
    # temporary file over the device, which as root replaced /dev/null with
    # a regular file holding the report (and as another user failed). A
    # device node of our own stands in for it when root can make one.
    work = os.path.join(self.root, b"dev")
    os.makedirs(work)
    with open(os.path.join(work, b"train.py"), "wb") as f:
      f.write(b"import tensorflow as tf\n"
              b"o = tf.contrib.mixed_precision.LossScaleOptimizer(None, 8)\n")
    null = b"/dev/null"
    if os.geteuid() == 0:
      null = os.path.join(work, b"null")
      os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    for argv in ([b"--outfile", b"new.py", b"--reportfile", null],
                 [b"--outfile", null, b"--reportfile", b"r.txt"]):
      status, _, _, what = self._run(work, b"--infile", b"train.py", *argv)
      self.assertEqual(status, 0, what)
      self.assertTrue(stat.S_ISCHR(os.stat(null).st_mode),
                      "the device was replaced: " + what)
    # A FIFO nobody reads: an error at once, not a wait with Ctrl-C held.
    fifo = os.path.join(work, b"fifo")
    os.mkfifo(fifo)
    status, _, err, what = self._run(work, b"--infile", b"train.py",
                                     b"--outfile", b"new2.py",
                                     b"--reportfile", fifo, timeout=60)
    self.assertEqual(status, 1, what)
    self.assertIn("--reportfile", err)
    self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))
    self.assertFalse(os.path.exists(os.path.join(work, b"new2.py")))
    self.assertEqual(_litter(work), [])

  def test_brackets_nested_too_deeply_for_python(self):
    # Found by the fuzz test: 1,200 nested brackets in a file that uses the
    # API crashed libcst's native parser (SIGSEGV, status 139) with one
    # process, and with worker processes the pool waited for the dead
    # worker forever. Python refuses more than 200 levels itself.
    work = os.path.join(self.root, b"deep")
    top = os.path.join(work, b"in")
    os.makedirs(top)
    use = _SOURCES[0].encode()
    with open(os.path.join(top, b"deep.py"), "wb") as f:
      f.write(use + b"y = " + b"[" * 1200 + b"]" * 1200 + b"\n")
    with open(os.path.join(top, b"big.py"), "wb") as f:
      f.write(use + b"a = 1\n" * 4000)  # Enough for worker processes.
    for jobs in (b"1", b"2"):
      out = b"out" + jobs
      status, _, _, what = self._run(
          work, b"--intree", b"in", b"--outtree", out, b"--jobs", jobs,
          timeout=120)
      self.assertEqual(status, 0, what)
      with open(os.path.join(work, b"contrib_mp_upgrade_report.txt")) as f:
        report = f.read()
      self.assertIn("deep.py: NOT CONVERTED: it does not parse as Python 3 "
                    "(syntax error at line 10)", report)
      self.assertIn("Python files: 2 read, 1 converted, 1 not parsed",
                    report)

  def test_grammar_newer_than_this_python_is_still_converted(self):
    # The check above must not refuse what only this Python cannot read:
    # libcst reads PEP 701 f-strings (3.12), which 3.9 to 3.11 reject.
    work = os.path.join(self.root, b"new_grammar")
    os.makedirs(work)
    source = (b"import tensorflow as tf\n"
              b"m = tf.contrib.mixed_precision.FixedLossScaleManager(2)\n"
              b"tags = {'k': 'v'}\n"
              b"print(f\"{tags[\"k\"]}\")\n")
    with open(os.path.join(work, b"new.py"), "wb") as f:
      f.write(source)
    status, _, _, what = self._run(
        work, b"--infile", b"new.py", b"--outfile", b"out.py", timeout=120)
    self.assertEqual(status, 0, what)
    with open(os.path.join(work, b"out.py"), "rb") as f:
      self.assertEqual(f.read(), source.replace(
          b"tf.contrib.mixed_precision", b"contrib_mixed_precision").replace(
              b"import tensorflow as tf\n",
              b"import tensorflow as tf\nimport contrib_mixed_precision\n"))

  def test_reportfile_that_names_code_is_refused(self):
    # Found by hand: `--reportfile` naming the file being converted (or the
    # `--outfile`, or a source file of `--intree`) replaced that code with
    # the report, status 0.
    work = os.path.join(self.root, b"report")
    top = os.path.join(work, b"in")
    os.makedirs(top)
    data = (b"import tensorflow as tf\n"
            b"o = tf.contrib.mixed_precision.LossScaleOptimizer(None, 8)\n")
    with open(os.path.join(top, b"train.py"), "wb") as f:
      f.write(data)
    for argv in ([b"--infile", b"in/train.py", b"--inplace"],
                 [b"--infile", b"in/train.py", b"--outfile", b"new.py",
                  b"--reportfile", b"new.py"],
                 [b"--intree", b"in", b"--outtree", b"out"],
                 [b"--intree", b"in", b"--inplace"]):
      if b"--reportfile" not in argv:
        argv += [b"--reportfile", b"in/train.py"]
      status, _, err, what = self._run(work, *argv)
      self.assertEqual(status, 1, what)
      self.assertIn("--reportfile", err)
      self.assertEqual(sorted(os.listdir(work)), [b"in"], what)
      self.assertEqual(_walk(top), {b"train.py": ("file", data)}, what)

  def test_check_prints_one_line_per_finding_whatever_the_name(self):
    # Found by the fuzz test's names: `--check` printed a newline in a file
    # name as it is, so an editor read a finding in another file, `b.py`.
    work = os.path.join(self.root, b"names")
    top = os.path.join(work, b"in")
    os.makedirs(top)
    for name in (b"a\nb.py", b"c\rd.py", b"e\x1b[31mf.py"):
      with open(os.path.join(top, name), "wb") as f:
        f.write(b"import tensorflow as tf\n"
                b"o = tf.contrib.mixed_precision.LossScaleOptimizer(None, 8)"
                b"\n")
    status, stdout, _, what = self._run(work, b"--check", b"in")
    self.assertEqual(status, 1, what)
    self.assertEqual(sorted(stdout.splitlines()), [
        "in/{}:2:5: tf.contrib.mixed_precision.LossScaleOptimizer is gone "
        "in TF 2: run contrib-mp-upgrade to convert it".format(name)
        for name in ("a\\x0ab.py", "c\\x0dd.py", "e\\x1b[31mf.py")],
                     what)

  def test_bytes_that_are_not_utf8_on_line_1_or_2_are_named(self):
    # Found by the fuzz test (issue 30, finding 7, still there): a latin-1
    # byte or a UTF-16 file, with no coding declaration at all, was
    # reported as "a bad coding declaration".
    work = os.path.join(self.root, b"coding")
    os.makedirs(work)
    files = {
        b"a.py": (b"import tensorflow as tf  # caf\xe9\n"
                  b"o = tf.contrib.mixed_precision.LossScaleOptimizer(1, 2)\n"),
        b"b.py": b"import tensorflow as tf\n".decode().encode("utf-16"),
        b"c.py": b"# coding: klingon\nimport tensorflow as tf\n"}
    for name, data in files.items():
      with open(os.path.join(work, name), "wb") as f:
        f.write(data)
    status, stdout, _, what = self._run(work, b"--check", *sorted(files))
    self.assertEqual(status, 1, what)
    self.assertEqual(stdout.splitlines(), [
        "a.py:1:1: error: invalid UTF-8 at line 1 (byte 0xe9); "
        "contrib-mp-upgrade cannot check it",
        "b.py:1:1: error: invalid UTF-8 at line 1 (byte 0xff); "
        "contrib-mp-upgrade cannot check it",
        "c.py:1:1: error: a bad coding declaration (unknown encoding: "
        "klingon); contrib-mp-upgrade cannot check it"], what)

  def test_fuzz(self):
    for round_ in range(_ROUNDS):
      with self.subTest(round=round_):
        self._round(round_)

  def _round(self, round_):
    rng = random.Random(_SEED * 1000 + round_)
    maker = _Maker(rng)
    work = os.path.join(self.root, b"r%d" % round_)
    top = os.path.join(work, b"in")
    os.makedirs(top)
    skipped = self._tree(maker, top)
    before = _walk(top)
    expected_out = {rel: v for rel, v in before.items() if rel not in skipped}
    code = {rel: data for rel, (kind, data) in expected_out.items()
            if kind == "file" and rel.endswith((b".py", b".ipynb"))}

    # --outtree
    out = os.path.join(work, b"out")
    status, stdout, _, what = self._run(
        work, b"--intree", b"in", b"--outtree", b"out", b"--reportfile",
        b"report.txt", b"--jobs", b"2")
    self.assertEqual(status, 0, what)
    self.assertEqual(_walk(top), before, "the input changed")
    after = _walk(out)
    self.assertEqual(sorted(after), sorted(expected_out), what)
    with open(os.path.join(work, b"report.txt"), "rb") as f:
      report = f.read().decode("utf-8")  # Must be UTF-8 whatever the names.
    counts = _counts(report, self)
    changed = {rel for rel in code if after[rel][1] != code[rel]}
    for rel, (kind, data) in expected_out.items():
      if rel not in code:
        self.assertEqual(after[rel], (kind, data), rel)
    python_failed = {rel for rel, data in code.items()
                     if rel.endswith(b".py") and not _python_parses(data)}
    self.assertEqual(counts["read"], len(code), what)
    self.assertEqual(counts["notebooks"],
                     sum(1 for rel in code if rel.endswith(b".ipynb")))
    self.assertEqual(counts["converted"], len(changed), what)
    self.assertEqual(counts["skipped"], len(skipped), report)
    self.assertEqual(counts["others"], len(expected_out) - len(code) - sum(
        1 for kind, _ in expected_out.values() if kind == "dir"))
    self.assertGreaterEqual(counts["failed"], len(python_failed))
    self.assertFalse(changed & python_failed, "a file Python cannot parse "
                     "was rewritten: {}".format(changed & python_failed))
    for rel in changed:
      if rel.endswith(b".py"):
        self.assertTrue(_python_parses(after[rel][1]),
                        "the output of {!r} no longer parses".format(rel))
      else:
        json.loads(after[rel][1])  # Still a notebook.
    summary = re.search(
        r"changed (\d+) file\(s\); (\d+) could not be parsed and were copied "
        r"unchanged; (\d+) warning\(s\); (\d+) path\(s\) skipped", stdout)
    self.assertIsNotNone(summary, stdout)
    self.assertEqual([int(x) for x in summary.groups()], [
        counts["converted"], counts["failed"], counts["warnings"],
        counts["skipped"]])
    self.assertEqual(_litter(work), [])

    # --inplace on a copy: the same bytes, the same report.
    copy = os.path.join(work, b"copy")
    shutil.copytree(top, copy, symlinks=True, ignore=lambda d, names: [
        n for n in names
        if stat.S_ISFIFO(os.lstat(os.path.join(d, n)).st_mode)])
    os.mkfifo(os.path.join(copy, b"fifo.py"))
    status, _, _, what = self._run(work, b"--intree", b"copy", b"--inplace",
                                   b"--reportfile", b"report2.txt",
                                   b"--jobs", b"1")
    self.assertEqual(status, 0, what)
    inplace = _walk(copy)
    for rel in before:
      if rel in skipped:
        self.assertEqual(inplace[rel][0], before[rel][0])
      else:
        self.assertEqual(inplace[rel], after[rel], rel)
    self.assertEqual(sorted(inplace), sorted(before))
    with open(os.path.join(work, b"report2.txt"), "rb") as f:
      self.assertEqual(_counts(f.read().decode("utf-8"), self), counts)
    self.assertEqual(_litter(work), [])

    # --dry_run writes nothing and says the same.
    listing = sorted(os.listdir(work))
    status, stdout, _, what = self._run(work, b"--intree", b"in",
                                        b"--dry_run")
    self.assertEqual(status, 0, what)
    self.assertEqual(sorted(os.listdir(work)), listing)
    self.assertEqual(_walk(top), before)
    self.assertIn("Dry run: {} file(s) would change; nothing was "
                  "written.".format(len(changed)), stdout)
    self.assertEqual(_counts(stdout[stdout.index(
        "contrib-mp-upgrade report\n"):], self), counts)

    # --check on the input names the files that changed, and the ones that
    # could not be read; on the output only the latter are left.
    status, stdout, _, what = self._run(work, b"--check", b"in")
    uses, errors = self._findings(stdout, b"in", code)
    self.assertEqual(status, 1 if uses or errors else 0, what)
    self.assertEqual(len(errors), counts["failed"], what)
    self.assertEqual({r for r in uses if r.endswith(b".py")},
                     {r for r in changed if r.endswith(b".py")}, what)
    self.assertLessEqual(uses, changed)
    status, stdout, _, what = self._run(work, b"--check", b"out")
    uses_after, errors_after = self._findings(stdout, b"out", code)
    self.assertEqual(uses_after, set(), "a second run would convert more: "
                     + what)
    self.assertEqual(errors_after, errors, what)

    # --infile on a few files: what the tree run wrote for them.
    for rel in rng.sample(sorted(code), 3):
      status, _, _, what = self._run(
          work, b"--infile", os.path.join(b"in", rel), b"--outfile",
          b"single.out", b"--reportfile", b"single.txt")
      self.assertEqual(status, 0, what)
      with open(os.path.join(work, b"single.out"), "rb") as f:
        self.assertEqual(f.read(), after[rel][1], rel)
      with open(os.path.join(work, b"single.txt"), "rb") as f:
        single = _counts(f.read().decode("utf-8"), self)
      self.assertEqual(single["read"], 1)
      self.assertEqual(single["converted"], int(rel in changed), rel)
      os.remove(os.path.join(work, b"single.out"))
      status, _, _, what = self._run(
          work, b"--infile", os.path.join(b"copy", rel), b"--inplace",
          b"--reportfile", b"single.txt")
      self.assertEqual(status, 0, what)
      with open(os.path.join(copy, rel), "rb") as f:
        self.assertEqual(f.read(), after[rel][1], "not idempotent: " +
                         repr(rel))
    self.assertEqual(_litter(work), [])

  def _findings(self, stdout, top, code):
    """({files with a use listed}, {files with an error listed})."""
    uses, errors = set(), set()
    text = "\n" + stdout
    for rel in code:
      path = re.sub("[\x00-\x1f\x7f]", lambda m: "\\x%02x" % ord(m.group()),
                    os.fsdecode(os.path.join(top, rel)))  # As --check names it.
      start = "\n" + path + ":"
      for m in re.finditer(re.escape(start) + r"(cell_\d+:)?\d+:\d+: "
                           r"(error: )?", text):
        (errors if m.group(2) else uses).add(rel)
    return uses, errors


if __name__ == "__main__":
  absltest.main()
