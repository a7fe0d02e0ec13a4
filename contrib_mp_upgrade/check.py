# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""`contrib-mp-upgrade --check`: lists what is left to convert, as linters do.

A team that has converted its tree wants it to stay converted. `--check`
reads files, notebooks and trees exactly as a conversion would, writes
nothing, and prints one line per use of `tf.contrib.mixed_precision` that
the conversion would rewrite (attribute chains, imports, dynamic imports of
the module by literal), in the form flake8 and ruff print, which editors and
CI systems turn into annotations:

```
train.py:12:7: tf.contrib.mixed_precision.LossScaleOptimizer is gone in TF 2:
run contrib-mp-upgrade to convert it
nb.ipynb:cell_3:3:1: import tensorflow.contrib.mixed_precision as mp imports
tf.contrib.mixed_precision, which TF 2 does not have: run contrib-mp-upgrade
to convert it
broken.py:4:1: error: it does not parse as Python 3 (syntax error at line 4);
contrib-mp-upgrade cannot check it
```

(each finding on one line; wrapped here).

Lines and columns count from 1; a column counts characters. A notebook's
site is written as nbQA writes it, `cell_N:line:col`, but `cell_N` counts
every cell, markdown and raw included, as the report's `cell N` does and a
reader counts down the page; the line and column are in that cell. A use
the conversion leaves as it is (in a `%%writefile` cell, a shell line, a
magic it cannot read) is listed too: it is still there to convert by
hand. The exit status
is 1 when anything is listed, a file that could not be read or parsed
included (a CI check must not pass on a file it never read), else 0 with
nothing printed. `.pre-commit-hooks.yaml` runs it on the files pre-commit
passes.

This module needs only the standard library (and libcst, via `walk`).
"""

import argparse
import dataclasses
import errno
import os
import re
import sys
from typing import Callable, List, Optional, Sequence, Tuple

from contrib_mp_upgrade import errors as errors_lib
from contrib_mp_upgrade import notebook as notebook_lib
from contrib_mp_upgrade import report as report_lib
from contrib_mp_upgrade import walk

PROG = report_lib.PROG
FIX = "run {} to convert it".format(PROG)

# Flags that write something or change what is converted: meaningless for a
# check, which only reads. `dest: how the user spells it`.
_CONFLICTS = (("outtree", "--outtree"), ("outfile", "--outfile"),
              ("inplace", "--inplace"), ("tf_upgrade_v2", "--tf_upgrade_v2"),
              ("dry_run", "--dry_run"), ("reportfile", "--reportfile"),
              ("contrib_to_slim", "--contrib-to-slim"),
              ("copyotherfiles", "--copyotherfiles"))

_CONTROL = re.compile("[\x00-\x1f\x7f]")

# The longest piece of code quoted in a message.
_QUOTE = 80


@dataclasses.dataclass(frozen=True, order=True)
class Finding:
  """One line of `--check` output.

  Attributes:
    path: The file, as the user named it (joined to `--intree`).
    cell: For a notebook, the cell (from 1, every cell counted); else 0.
    line: The line, from 1 (in the cell, for a notebook).
    column: The column, from 1, in characters.
    message: What is wrong and what to do; errors start with `error: `.
  """
  path: str
  cell: int
  line: int
  column: int
  message: str

  def format(self) -> str:
    where = "cell_{}:".format(self.cell) if self.cell else ""
    # A newline (or a terminal escape) in a file name would make one
    # finding read as two, the second in another file.
    path = _CONTROL.sub(lambda m: "\\x{:02x}".format(ord(m.group())),
                        self.path)
    return "{}:{}{}:{}: {}".format(path, where, self.line, self.column,
                                   self.message)

  @property
  def is_error(self) -> bool:
    return self.message.startswith("error: ")


def _quote(code: str) -> str:
  """`code` on one line, cut to `_QUOTE` characters."""
  text = " ".join(code.split())
  return text if len(text) <= _QUOTE else text[:_QUOTE - 3] + "..."


_IMPORTS = re.compile(r"\bimport\b|\b__import__\s*\(|\bimport_module\s*\(")


def message(change) -> str:
  """What `--check` says about one `rewrite.Change`."""
  old = _quote(change.old)
  if change.tf2x:
    return _tf2x_message(change, old)
  if change.new == "(removed)":
    return "{} uses tf.contrib.mixed_precision, which TF 2 does not have: " \
           "{}".format(old, FIX)
  if _IMPORTS.search(change.old):
    return "{} imports tf.contrib.mixed_precision, which TF 2 does not " \
           "have: {}".format(old, FIX)
  return "{} is gone in TF 2: {}".format(old, FIX)


def _tf2x_message(change, old: str) -> str:
  """What `--check` says about a TF 2.0-2.8 name (`tf2x_names`)."""
  if change.tf2x == "import":
    return ("{} imports TF 2.0-2.8's experimental mixed precision, which TF "
            "2.9 removed: {}".format(old, FIX))
  if change.tf2x.endswith("loss_scale=...)"):
    return ("{} passes TF 2.0-2.8's `loss_scale`, which today's class "
            "refuses: {}".format(old, FIX))
  if old == change.tf2x:
    return "{} is TF 2.0-2.8's, which TF 2.9 removed: {}".format(old, FIX)
  return "{} is TF 2.0-2.8's `{}`, which TF 2.9 removed: {}".format(
      old, change.tf2x, FIX)


def _error(path: str, why: str, line: int = 1) -> Finding:
  return Finding(path, 0, line, 1, "error: {}; {} cannot check it".format(
      why, PROG))


def entry_findings(entry: walk.Entry, path: str) -> List[Finding]:
  """The findings of one scanned Python file or notebook.

  Args:
    entry: A "python" or "notebook" `walk.Entry` with its `result`.
    path: The name to print for it.

  Returns:
    One `Finding` per change the conversion would make, or one error when
    the file could not be read as Python (or as a notebook).
  """
  result = entry.result
  if result.error is not None:
    line = 1
    if entry.kind == "python":
      # Point at the line the parser names, as a linter would.
      match = re.search(r"\bat line (\d+)", result.error)
      line = int(match.group(1)) if match else 1
    else:
      match = _CELL_SITE.search(result.error)
      if match is not None:
        cell, line, col = (int(g or 1) for g in match.groups())
        return [dataclasses.replace(_error(path, result.error, line),
                                    cell=cell, column=col)]
    return [_error(path, result.error, line)]
  found = []
  notebook = entry.notebook
  for change in result.changes:
    cell, line, col = 0, change.line, change.column
    if notebook is not None:
      where = notebook_lib.locate(notebook, entry.source, change.line)
      if where is None:
        continue  # The stand-in's own header: never a use.
      cell, line = where
      col = notebook_lib.column(notebook, change.line, col)
    found.append(Finding(path, cell, line, max(col, 1), message(change)))
  for line, what, fix in result.tf2x_stops:
    # A TF 2.x Keras use left as it was: no change, but it stops the file.
    cell = 0
    if notebook is not None:
      where = notebook_lib.locate(notebook, entry.source, line)
      if where is None:
        continue
      cell, line = where
    found.append(Finding(path, cell, line, 1, "{}: {}".format(what, fix)))
  for line, _, what in notebook.left if notebook is not None else ():
    cell, line = notebook_lib.locate(notebook, entry.source, line)
    found.append(Finding(path, cell, line, 1, (
        "{} uses tf.contrib.mixed_precision, not converted there by {}: "
        "convert it by hand").format(what, PROG)))
  return found


# `syntax error at cell 4, line 3, column 9` in a notebook's error.
_CELL_SITE = re.compile(r"\bcell (\d+), line (\d+)(?:, column (\d+))?")


def _skipped(path: str, why: str) -> Optional[Finding]:
  """An error for a skipped path that may hide code, else None.

  A file or directory that could not be read may hold uses; a symbolic
  link that leaves the tree, a dangling one or a FIFO holds none that the
  conversion would touch either.
  """
  if "could not be" in why or "cannot be followed" in why:
    return _error(path, why)
  return None


def _unreadable(error: OSError) -> str:
  """Why a named file could not be read, and what to do about it."""
  why = "could not be read ({})".format(errors_lib.describe_os_error(error))
  if error.errno in (errno.ENOENT, errno.ENOTDIR):
    return why + ": pass the path of an existing file"
  if error.errno in (errno.EACCES, errno.EPERM):
    return why + ": check its permissions"
  return why


def _join(root: str, name: str) -> str:
  """The path to print for `name` (`/`-separated; "." for the root)."""
  return root if name == "." else os.path.join(root, *name.split("/"))


def check(trees: Sequence[str] = (), files: Sequence[str] = (),
          jobs: Optional[int] = None) -> Tuple[List[Finding], int]:
  """Checks trees and files; writes nothing.

  Args:
    trees: Directories, walked as `--intree` walks them (`*.py` and
      `*.ipynb` files).
    files: Files, each read as a notebook if its name ends in `.ipynb`,
      else as Python whatever its name (pre-commit passes scripts without
      a suffix).
    jobs: Worker processes for large trees; None for one per core.

  Returns:
    `(findings sorted by path, cell, line and column, files checked)`.
  """
  found: List[Finding] = []
  checked = 0
  for root in trees:
    plan = walk.scan_tree(root, False, None, jobs)
    for entry in plan.python():
      checked += 1
      found += entry_findings(entry, _join(root, entry.name))
    for name, why in plan.skipped:
      finding = _skipped(_join(root, name), why)
      if finding is not None:
        found.append(finding)
  for path in files:
    if os.path.exists(path) and not os.path.isfile(path):
      # A FIFO would block the read forever, /dev/zero never end it.
      found.append(_error(path, "not a regular file ({})".format(
          walk.special_kind(os.stat(path).st_mode))))
      continue
    try:
      # Read here first: `scan_file` words its errors for `--infile`.
      with open(path, "rb"):
        pass
    except OSError as e:
      found.append(_error(path, _unreadable(e)))
      continue
    try:
      plan = walk.scan_file(path, path)
    except errors_lib.UpgradeError as e:
      found.append(_error(path, "could not be read: {}".format(e)))
      continue
    checked += 1
    found += entry_findings(plan.entries[0], path)
  return sorted(set(found)), checked


def _write(text: str) -> None:
  """Writes `text` to stdout, file names with undecodable bytes included.

  A name read from the file system keeps each byte that is not valid in
  the file system's encoding as a surrogate; written back as that byte,
  the printed path is the file's real name.
  """
  stream = getattr(sys.stdout, "buffer", None)
  if stream is None:
    sys.stdout.write(text.encode("utf-8", "backslashreplace").decode())
    return
  encoding = sys.stdout.encoding or "utf-8"
  try:
    data = text.encode(encoding, "surrogateescape")
  except UnicodeEncodeError:
    data = text.encode(encoding, "backslashreplace")
  sys.stdout.flush()
  stream.write(data)
  stream.flush()


def main(parser: Callable[[], argparse.ArgumentParser],
         argv: Optional[Sequence[str]]) -> int:
  """`contrib-mp-upgrade --check ...`.

  Args:
    parser: Makes the command's argument parser (`cli.parser`).
    argv: The arguments, without the program name; None for `sys.argv[1:]`.

  Returns:
    1 when a use or an unreadable file was found, else 0. A flag that
    cannot go with `--check` ends the program with status 2, as argparse
    does.
  """
  argv = sys.argv[1:] if argv is None else list(argv)
  given = parser()
  # Reading the flags again with every default replaced by a marker tells
  # which ones the user typed (`--reportfile` with its default value too).
  unset = object()
  actions = given._actions  # pylint: disable=protected-access
  given.set_defaults(**{a.dest: unset for a in actions if a.dest != "help"})
  typed = {dest for dest, value in vars(
      given.parse_intermixed_args(argv)).items() if value is not unset}
  args = parser().parse_intermixed_args(argv)
  if not args.check:
    parser().error(
        "file or directory arguments ({}) go with `--check` only. To convert "
        "a file, use `--infile FILE --outfile NEW` (or `--inplace`); to check "
        "it, add `--check`.".format(" ".join(args.paths)))
  conflicts = [flag for dest, flag in _CONFLICTS if dest in typed]
  if conflicts:
    parser().error(
        "`--check` only reads and reports, so it cannot be combined with "
        "{}. Drop {}, or drop `--check` to convert.".format(
            ", ".join("`{}`".format(c) for c in conflicts),
            "it" if len(conflicts) == 1 else "them"))
  trees = [args.intree] if args.intree is not None else []
  files = [args.infile] if args.infile is not None else []
  if not (trees or files or args.paths):
    parser().error(
        "`--check` needs something to check: `--intree DIR`, `--infile "
        "FILE`, or files and directories as arguments (as pre-commit passes "
        "them).")
  missing = [p for p in trees if not os.path.isdir(p)] + [
      p for p in files if not os.path.isfile(p)]
  if missing:
    parser().error(
        "{!r} does not exist (or is not a {}). Pass an existing "
        "path.".format(missing[0], "directory" if missing[0] in trees
                       else "file"))
  for path in args.paths:
    (trees if os.path.isdir(path) else files).append(path)
  findings, checked = check(trees, files, args.jobs)
  if not findings:
    return 0
  _write("".join(f.format() + "\n" for f in findings))
  uses = [f for f in findings if not f.is_error]
  errors = len(findings) - len(uses)
  parts = []
  if uses:
    what = "tf.contrib.mixed_precision"
    if any("TF 2.0-2.8" in f.message for f in uses):
      what += " or of TF 2.0-2.8's removed mixed-precision names"
    parts.append("{} use(s) of {} left in {} "
                 "file(s); convert them with `{} --intree DIR --inplace` (or "
                 "`--infile FILE --inplace`)".format(
                     len(uses), what, len({f.path for f in uses}), PROG))
  if errors:
    parts.append("{} file(s) could not be checked".format(errors))
  print("{}: --check: {} file(s) checked: {}.".format(
      PROG, checked, "; ".join(parts)), file=sys.stderr)
  return 1
