# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The `contrib-mp-upgrade` command's flags: its parser, `--help`, `--version`.

This module needs only the standard library. The entry point parses the
flags with it before it imports the conversion (`cli`, which needs libcst),
so `--help`, `--version` and a bad flag are answered on a machine without
libcst; only a conversion or a `--check` asks for it.
"""

import argparse
import ast
import functools
import os
from typing import Optional

PROG = "contrib-mp-upgrade"
# Not tf_upgrade_v2's default (report.txt), which a later run of it in the
# same directory would overwrite.
DEFAULT_REPORT = "contrib_mp_upgrade_report.txt"
_DISTRIBUTION = "contrib_mixed_precision"


def _version_from_source(path: str) -> Optional[str]:
  """`__version__` of the version module at `path`, read, never imported.

  Importing `contrib_mixed_precision` imports TensorFlow, and this command
  runs where TensorFlow may be 1.15 or absent (docs/design.md, contract 9).
  """
  try:
    with open(path, encoding="utf-8") as f:
      tree = ast.parse(f.read(), path)
  except (OSError, SyntaxError, ValueError):
    return None
  for node in tree.body:
    if (isinstance(node, ast.Assign) and len(node.targets) == 1 and
        isinstance(node.targets[0], ast.Name) and
        node.targets[0].id == "__version__" and
        isinstance(node.value, ast.Constant) and
        isinstance(node.value.value, str)):
      return node.value.value
  return None


@functools.lru_cache(maxsize=None)
def version() -> str:
  """The version of the distribution this command came with.

  `contrib_mixed_precision/version.py`, the single source of the version,
  sits beside this package both in a source checkout and in an installed
  wheel; the installed distribution's metadata answers if it does not.
  """
  here = os.path.dirname(os.path.abspath(__file__))
  found = _version_from_source(os.path.join(
      os.path.dirname(here), _DISTRIBUTION, "version.py"))
  if found is not None:
    return found
  try:
    from importlib import metadata  # pylint: disable=g-import-not-at-top
    return metadata.version(_DISTRIBUTION)
  except Exception:  # pylint: disable=broad-except
    # metadata.PackageNotFoundError, or a broken installation's own error:
    # `--version` still answers.
    return "unknown"


def _bool(value: str) -> bool:
  """Parses `--copyotherfiles` values the way users write them."""
  lowered = value.strip().lower()
  if lowered in ("1", "true", "t", "yes", "y"):
    return True
  if lowered in ("0", "false", "f", "no", "n"):
    return False
  raise argparse.ArgumentTypeError(
      "expected true or false, received {!r}".format(value))


def _jobs(value: str) -> int:
  try:
    jobs = int(value)
  except ValueError:
    jobs = 0
  if jobs < 1:
    raise argparse.ArgumentTypeError(
        "expected a whole number of processes, 1 or more; received "
        "{!r}".format(value))
  return jobs


def parser() -> argparse.ArgumentParser:
  """The command's argument parser."""
  result = argparse.ArgumentParser(
      prog=PROG,
      description=(
          "Convert TensorFlow 1.15 `tf.contrib.mixed_precision` code to the "
          "`contrib_mixed_precision` package, preserving comments and "
          "formatting. Notebooks (*.ipynb) are converted cell by cell, "
          "IPython lines kept. Files that do not use the API are copied "
          "unchanged. "
          "Needs only Python and libcst; TensorFlow is not imported."),
      epilog=(
          "Examples:\n"
          "  {0} --intree old/ --outtree new/\n"
          "  {0} --intree old/ --outtree new/ --tf_upgrade_v2\n"
          "  {0} --intree old/ --outtree new/ --contrib-to-slim\n"
          "  {0} --infile train.py --outfile train_tf2.py\n"
          "  {0} --infile train.ipynb --outfile train_tf2.ipynb\n"
          "  {0} --intree src/ --inplace\n"
          "  {0} --intree src/ --dry_run\n"
          "  {0} --check src/ train.py nb.ipynb\n"
          "Exit status: 0 when the input was processed (warnings included), "
          "1 when it could not be (bad paths, a failed write: then nothing "
          "was written), 2 on bad flags, 130 on Ctrl-C (143 on SIGTERM): "
          "the command stops at once, ends its workers and writes "
          "nothing. With --check: 1 when a use of "
          "tf.contrib.mixed_precision is left or a file could not be "
          "checked, else 0.").format(PROG),
      formatter_class=argparse.RawDescriptionHelpFormatter)
  result.add_argument(
      "--version", action="version",
      version="{} {}".format(PROG, version()),
      help="print the version of contrib_mixed_precision this command "
      "came with, and exit")
  result.add_argument(
      "--infile", help="a Python file or a Jupyter notebook (*.ipynb) to "
      "convert")
  result.add_argument("--outfile", help="where to write the converted file")
  result.add_argument("--intree", help="a directory to convert recursively")
  result.add_argument(
      "--outtree", help="where to write the converted tree (new or empty; "
      "it appears only when the whole tree is written)")
  result.add_argument("--inplace", action="store_true",
                      help="rewrite the input file or tree in place")
  result.add_argument("--reportfile", default=DEFAULT_REPORT,
                      help="where to write the report (default: %(default)s)")
  result.add_argument(
      "--copyotherfiles", type=_bool, default=True, metavar="BOOL",
      help="in tree mode, copy files that are not *.py or *.ipynb too "
      "(default: %(default)s)")
  result.add_argument(
      "--tf_upgrade_v2", "--tf-upgrade-v2", dest="tf_upgrade_v2",
      action="store_true",
      help="also run TensorFlow's tf_upgrade_v2 command over the result "
      "(needs TensorFlow installed) and include its findings in the report")
  result.add_argument(
      "--contrib-to-slim", "--contrib_to_slim", dest="contrib_to_slim",
      action="store_true",
      help="also rewrite the tf.contrib.layers, tf.contrib.framework "
      "(arg_scope, variables) and tf.contrib.slim names that tf_slim "
      "provides unchanged, such as tf.contrib.layers.fully_connected -> "
      "tf_slim.fully_connected; the report lists every use left as it was, "
      "and why. The result needs tf_slim: pip install "
      "'contrib_mixed_precision[slim]'")
  result.add_argument(
      "--dry_run", "--dry-run", dest="dry_run", action="store_true",
      help="print a diff and the report; write nothing")
  result.add_argument(
      "--jobs", type=_jobs, default=None, metavar="N",
      help="worker processes for large trees (default: one per core)")
  result.add_argument(
      "--check", action="store_true",
      help="write nothing; print each use of tf.contrib.mixed_precision "
      "left in --intree, --infile or the PATHs as path:line:col: message "
      "(notebooks: path:cell_N:line:col), as linters do, and exit 1 if "
      "there is any (or a file could not be read); for CI and pre-commit")
  result.add_argument(
      "paths", nargs="*", metavar="PATH",
      help="with --check: files and directories to check, as pre-commit "
      "passes them")
  return result
