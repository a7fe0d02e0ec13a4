#!/usr/bin/env python3
# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Measures `contrib-mp-upgrade`: lines per second, CPU, and how it scales.

Four measurements, each of the real command or of one file's rewrite in a
fresh process, so that what is counted is what a user waits for:

* `tree` (the default): a tree from scripts/make_legacy_tree.py (400 files
  of real size; 1 in 20 uses `tf.contrib.mixed_precision`, 1 function in 7
  `tf.contrib.layers`), converted by `python -m contrib_mp_upgrade`. Prints
  wall time, user and system CPU of the command and its workers, lines per
  second and lines per CPU-second. CPU-seconds barely move with the
  machine's load; wall time does.
* `--tf_upgrade_v2`: the same tree through this command alone, through
  TensorFlow's `tf_upgrade_v2` alone, and through this command with
  `--tf_upgrade_v2`; prints the CPU of each and the ratio of the last to
  the first two together. Needs TensorFlow's `tf_upgrade_v2` on PATH.
* `--sizes`: one file's rewrite at 1k to 128k lines of dense uses, and a
  generated data module of about 5 MB with one use; prints CPU time and
  peak memory per line, which stay flat when the rewrite is linear.
* `--notebook N`: a notebook of N code cells, each with uses to convert
  and an output, against the same code as one `.py` file, both through
  `--infile ... --outfile ...`; prints the wall time and CPU of each and
  their ratio (issue 43 asks at most 1.5 at 8,000 cells).

  scripts/time_upgrade.py                        # this checkout
  scripts/time_upgrade.py --source /tmp/old      # another checkout's code
  scripts/time_upgrade.py --jobs 1               # one process
  scripts/time_upgrade.py --sizes --max_lines 16000
  scripts/time_upgrade.py --notebook 8000 --repeat 1
"""

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

_HERE = os.path.dirname(os.path.abspath(__file__))

# Run in a fresh interpreter per size: its CPU time and peak memory are
# that one rewrite's, plus the interpreter's fixed cost (measured apart).
_ONE_FILE = r"""
import json, resource, sys, time
from contrib_mp_upgrade import rewrite
with open(sys.argv[1], "rb") as f:
  source = f.read()
start = time.process_time()
result = rewrite.upgrade_source(source)
cpu = time.process_time() - start
assert result.error is None and result.changed, result.error
print(json.dumps({"cpu": cpu, "uses": len(result.changes),
                  "peak_kb": resource.getrusage(
                      resource.RUSAGE_SELF).ru_maxrss}))
"""


def _lines(root: str) -> int:
  total = 0
  for directory, _, names in os.walk(root):
    for name in names:
      if name.endswith(".py"):
        with open(os.path.join(directory, name), "rb") as f:
          total += f.read().count(b"\n")
  return total


def _children_cpu():
  usage = resource.getrusage(resource.RUSAGE_CHILDREN)
  return usage.ru_utime, usage.ru_stime


def _timed(command, env, cwd):
  """Runs `command`; returns (wall, user, sys) of it and its children."""
  user0, sys0 = _children_cpu()
  start = time.perf_counter()
  subprocess.run(command, check=True, env=env, cwd=cwd,
                 stdout=subprocess.DEVNULL)
  wall = time.perf_counter() - start
  user1, sys1 = _children_cpu()
  return wall, user1 - user0, sys1 - sys0


def _env(source: str):
  return dict(os.environ, PYTHONPATH=os.pathsep.join(
      p for p in (source, os.environ.get("PYTHONPATH")) if p))


def _make_tree(args, tree: str) -> int:
  subprocess.run(
      [sys.executable, os.path.join(_HERE, "make_legacy_tree.py"), "--out",
       tree, "--files", str(args.files), "--filler", str(args.filler),
       "--mp_every", str(args.mp_every), "--layers_every",
       str(args.layers_every)], check=True, stdout=subprocess.DEVNULL)
  return _lines(tree)


def _upgrade_command(tree, out, report, jobs, extra=()):
  command = [sys.executable, "-m", "contrib_mp_upgrade", "--intree", tree,
             "--outtree", out, "--reportfile", report] + list(extra)
  if jobs is not None:
    command += ["--jobs", str(jobs)]
  return command


def time_tree(args, tmp: str) -> None:
  tree = os.path.join(tmp, "tree")
  lines = _make_tree(args, tree)
  env = _env(args.source)
  runs = []
  for i in range(args.repeat):
    out = os.path.join(tmp, "out{}".format(i))
    runs.append(_timed(_upgrade_command(
        tree, out, os.path.join(tmp, "report{}.txt".format(i)), args.jobs),
                       env, tmp))
    shutil.rmtree(out)
  wall = min(r[0] for r in runs)
  user, system = min((r[1], r[2]) for r in runs)
  cpu = user + system
  print("{} files, {:,} lines, 1 in {} using the API, tf.contrib.layers in "
        "1 function in {}; jobs: {}; best of {}:".format(
            args.files, lines, args.mp_every, args.layers_every,
            args.jobs or "one per core ({})".format(os.cpu_count()),
            args.repeat))
  print("  wall {:.2f} s: {:,.0f} lines/s".format(wall, lines / wall))
  print("  CPU  {:.2f} s (user {:.2f}, sys {:.2f}): {:,.0f} lines per "
        "CPU-second".format(cpu, user, system, lines / cpu))


def time_tf_upgrade_v2(args, tmp: str) -> None:
  command = shutil.which("tf_upgrade_v2") or os.path.join(
      os.path.dirname(sys.executable), "tf_upgrade_v2")
  if not os.path.exists(command):
    sys.exit("time_upgrade: --tf_upgrade_v2 needs TensorFlow's "
             "tf_upgrade_v2 on PATH or beside {}.".format(sys.executable))
  tree = os.path.join(tmp, "tree")
  lines = _make_tree(args, tree)
  env = _env(args.source)
  ours = _timed(_upgrade_command(tree, os.path.join(tmp, "a"),
                                 os.path.join(tmp, "a.txt"), args.jobs),
                env, tmp)
  theirs = _timed([command, "--intree", os.path.join(tmp, "a"), "--outtree",
                   os.path.join(tmp, "b"), "--reportfile",
                   os.path.join(tmp, "b.txt")], env, tmp)
  both = _timed(_upgrade_command(tree, os.path.join(tmp, "c"),
                                 os.path.join(tmp, "c.txt"), args.jobs,
                                 ["--tf_upgrade_v2"]), env, tmp)
  print("{:,} lines; CPU (user + sys) and wall:".format(lines))
  for name, (wall, user, system) in (("contrib-mp-upgrade", ours),
                                     ("tf_upgrade_v2", theirs),
                                     ("contrib-mp-upgrade --tf_upgrade_v2",
                                      both)):
    print("  {:<36} CPU {:6.2f} s  wall {:6.2f} s".format(
        name, user + system, wall))
  apart = sum(ours[1:]) + sum(theirs[1:])
  print("  --tf_upgrade_v2 / the two run apart: {:.2f} (CPU)".format(
      sum(both[1:]) / apart))


def _dense(lines: int) -> str:
  body = ["import tensorflow as tf", "", "", "def build(opt):"]
  for i in range(lines // 2):
    body.append("  m{0} = tf.contrib.mixed_precision."
                "FixedLossScaleManager({0})".format(i + 1))
    body.append("  o{0} = tf.contrib.mixed_precision.LossScaleOptimizer("
                "opt, m{0})".format(i))
  return "\n".join(body) + "\n"


def _data_module(megabytes: float) -> str:
  head = ["import tensorflow as tf", "",
          "OPTIMIZER = tf.contrib.mixed_precision.LossScaleOptimizer", "",
          "TABLE = ["]
  row = "    ({0}, {0}.25, 'token_{0}'),"
  body, size, i = [], 0, 0
  while size < megabytes * 1e6:
    line = row.format(i)
    body.append(line)
    size += len(line) + 1
    i += 1
  return "\n".join(head + body + ["]"]) + "\n"


def time_sizes(args, tmp: str) -> None:
  env = _env(args.source)
  cases, lines = [], 1000
  while lines <= args.max_lines:
    cases.append(("dense uses", _dense(lines)))
    lines *= 2
  cases.append(("data module, {} MB, 1 use".format(args.data_mb),
                _data_module(args.data_mb)))
  print("{:<26} {:>8} {:>6} {:>9} {:>11} {:>10} {:>11}".format(
      "file", "lines", "uses", "CPU s", "us/line", "peak MB", "bytes/line"))
  for name, text in cases:
    path = os.path.join(tmp, "one.py")
    with open(path, "w") as f:
      f.write(text)
    proc = subprocess.run([sys.executable, "-c", _ONE_FILE, path], env=env,
                          check=True, stdout=subprocess.PIPE)
    found = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    n = text.count("\n")
    print("{:<26} {:>8,} {:>6,} {:>9.2f} {:>11.1f} {:>10.0f} {:>11,.0f}"
          .format(name, n, found["uses"], found["cpu"],
                  1e6 * found["cpu"] / n, found["peak_kb"] / 1024,
                  found["peak_kb"] * 1024 / n))
    sys.stdout.flush()


def _cells(count: int):
  """`count` code cells of TF 1.15 code, each changed by the conversion."""
  cells = ["import tensorflow as tf\n"]
  for i in range(1, count):
    cells.append(
        "m{0} = tf.contrib.mixed_precision.FixedLossScaleManager({0}.0)\n"
        "opt{0} = tf.contrib.mixed_precision.LossScaleOptimizer(\n"
        "    tf.train.GradientDescentOptimizer(0.1), m{0})\n"
        "print('cell', {0})\n".format(i))
  return cells


def _notebook_bytes(cells) -> bytes:
  """The notebook Jupyter would save: outputs, and a markdown cell per 10."""
  out = []
  for i, source in enumerate(cells):
    if i % 10 == 1:
      out.append({"cell_type": "markdown", "metadata": {},
                  "source": ["## Part {}\n".format(i // 10), "Notes."]})
    lines = source.splitlines(True)
    lines[-1] = lines[-1].rstrip("\n")
    out.append({"cell_type": "code", "execution_count": i + 1,
                "metadata": {}, "outputs": [
                    {"name": "stdout", "output_type": "stream",
                     "text": ["cell {}\n".format(i)]}],
                "source": lines})
  notebook = {"cells": out, "metadata": {"kernelspec": {
      "display_name": "Python 3", "language": "python", "name": "python3"}},
              "nbformat": 4, "nbformat_minor": 5}
  return (json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False)
          + "\n").encode("utf-8")


def time_notebook(args, tmp: str) -> None:
  cells = _cells(args.notebook)
  inputs = {"code.py": "\n".join(cells).encode("utf-8"),
            "code.ipynb": _notebook_bytes(cells)}
  env = _env(args.source)
  best = {}
  for name, data in inputs.items():
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
      f.write(data)
    runs = []
    for i in range(args.repeat):
      out = os.path.join(tmp, "out{}_{}".format(i, name))
      runs.append(_timed(
          [sys.executable, "-m", "contrib_mp_upgrade", "--infile", path,
           "--outfile", out, "--reportfile",
           os.path.join(tmp, "report.txt")], env, tmp))
      os.remove(out)
    best[name] = (min(r[0] for r in runs), min(r[1] + r[2] for r in runs))
  lines = inputs["code.py"].count(b"\n")
  print("{:,} changed code cells ({:,} lines); best of {}:".format(
      args.notebook, lines, args.repeat))
  for name, (wall, cpu) in best.items():
    print("  {:<12} wall {:7.2f} s  CPU {:7.2f} s".format(name, wall, cpu))
  print("  notebook / .py: {:.2f} (wall), {:.2f} (CPU)".format(
      best["code.ipynb"][0] / best["code.py"][0],
      best["code.ipynb"][1] / best["code.py"][1]))


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(
      description=__doc__.split("\n\n")[0],
      formatter_class=argparse.RawDescriptionHelpFormatter,
      epilog=__doc__.split("\n\n", 1)[1])
  what = parser.add_mutually_exclusive_group()
  what.add_argument("--tf_upgrade_v2", action="store_true",
                    help="compare --tf_upgrade_v2 with the two passes run "
                    "apart")
  what.add_argument("--sizes", action="store_true",
                    help="one file's rewrite at growing sizes")
  what.add_argument("--notebook", type=int, metavar="CELLS",
                    help="a notebook of CELLS changed code cells against "
                    "the same code as a .py file")
  parser.add_argument("--files", type=int, default=400,
                      help="Python files (default: %(default)s)")
  parser.add_argument("--filler", type=int, default=200,
                      help="ordinary lines per file (default: %(default)s)")
  parser.add_argument("--mp_every", type=int, default=20,
                      help="every Nth file uses the API (default: "
                      "%(default)s)")
  parser.add_argument("--layers_every", type=int, default=7,
                      help="every Nth function calls tf.contrib.layers "
                      "(default: %(default)s)")
  parser.add_argument("--repeat", type=int, default=3,
                      help="runs; the best is reported (default: "
                      "%(default)s)")
  parser.add_argument("--source", default=os.path.dirname(_HERE),
                      help="the checkout whose contrib_mp_upgrade runs "
                      "(default: this one)")
  parser.add_argument("--jobs", type=int, default=None,
                      help="passed to the command's --jobs, if given")
  parser.add_argument("--max_lines", type=int, default=128000,
                      help="with --sizes, the largest dense file "
                      "(default: %(default)s)")
  parser.add_argument("--data_mb", type=float, default=5.0,
                      help="with --sizes, the data module's size in MB "
                      "(default: %(default)s)")
  args = parser.parse_args(argv)
  tmp = tempfile.mkdtemp(prefix="time_upgrade_")
  try:
    if args.sizes:
      time_sizes(args, tmp)
    elif args.notebook:
      time_notebook(args, tmp)
    elif args.tf_upgrade_v2:
      time_tf_upgrade_v2(args, tmp)
    else:
      time_tree(args, tmp)
  finally:
    shutil.rmtree(tmp, ignore_errors=True)
  return 0


if __name__ == "__main__":
  sys.exit(main())
