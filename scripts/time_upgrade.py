#!/usr/bin/env python3
# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Measures `contrib-mp-upgrade` in lines per second on a synthetic tree.

The tree comes from scripts/make_legacy_tree.py: files the size of real
ones, most of them using other `tf.contrib` modules, and about 1 in 20
using `tf.contrib.mixed_precision`. The command runs as a user runs it (a
fresh `python -m contrib_mp_upgrade` without `--tf_upgrade_v2`), so the
time includes reading, the report and writing the new tree:

  scripts/time_upgrade.py                       # this checkout
  scripts/time_upgrade.py --source /tmp/old     # another checkout's code
  scripts/time_upgrade.py --jobs 1              # one process
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

_HERE = os.path.dirname(os.path.abspath(__file__))


def _lines(root: str) -> int:
  total = 0
  for directory, _, names in os.walk(root):
    for name in names:
      if name.endswith(".py"):
        with open(os.path.join(directory, name), "rb") as f:
          total += f.read().count(b"\n")
  return total


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--files", type=int, default=400,
                      help="Python files (default: %(default)s)")
  parser.add_argument("--filler", type=int, default=250,
                      help="ordinary lines per file (default: %(default)s)")
  parser.add_argument("--mp_every", type=int, default=20,
                      help="every Nth file uses the API (default: "
                      "%(default)s)")
  parser.add_argument("--repeat", type=int, default=3,
                      help="runs; the best is reported (default: "
                      "%(default)s)")
  parser.add_argument("--source", default=os.path.dirname(_HERE),
                      help="the checkout whose contrib_mp_upgrade runs "
                      "(default: this one)")
  parser.add_argument("--jobs", type=int, default=None,
                      help="passed to the command's --jobs, if given")
  args = parser.parse_args(argv)
  tmp = tempfile.mkdtemp(prefix="time_upgrade_")
  try:
    tree = os.path.join(tmp, "tree")
    subprocess.run(
        [sys.executable, os.path.join(_HERE, "make_legacy_tree.py"), "--out",
         tree, "--files", str(args.files), "--filler", str(args.filler),
         "--mp_every", str(args.mp_every)], check=True,
        stdout=subprocess.DEVNULL)
    lines = _lines(tree)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (args.source, os.environ.get("PYTHONPATH")) if p))
    best = None
    for i in range(args.repeat):
      out = os.path.join(tmp, "out{}".format(i))
      command = [sys.executable, "-m", "contrib_mp_upgrade", "--intree",
                 tree, "--outtree", out, "--reportfile",
                 os.path.join(tmp, "report{}.txt".format(i))]
      if args.jobs is not None:
        command += ["--jobs", str(args.jobs)]
      start = time.perf_counter()
      subprocess.run(command, check=True, env=env, cwd=tmp,
                     stdout=subprocess.DEVNULL)
      elapsed = time.perf_counter() - start
      best = elapsed if best is None else min(best, elapsed)
    print("{} files, {} lines, 1 in {} using the API; cores: {}; best of "
          "{}: {:.2f} s, {:,.0f} lines/s".format(
              args.files, lines, args.mp_every, os.cpu_count(), args.repeat,
              best, lines / best))
  finally:
    shutil.rmtree(tmp, ignore_errors=True)
  return 0


if __name__ == "__main__":
  sys.exit(main())
