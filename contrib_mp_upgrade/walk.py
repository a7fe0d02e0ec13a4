# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Reads an input tree (or one file) into a plan; writes nothing.

A run has two phases. `scan_tree` and `scan_file` read every input and
decide everything: what each file becomes, and what is skipped and why
(dangling symbolic links, link loops, unreadable files, FIFOs). The code
is converted on the way (`workers.upgrade_all`). Nothing is written in
that phase; `commit` then writes the `Plan`, all or nothing.

This module needs only the standard library (and libcst, via `rewrite`).
"""

import dataclasses
import errno
import functools
import os
import stat
from typing import Callable, Iterator, List, Optional, Tuple

from contrib_mp_upgrade import blockers as blockers_lib
from contrib_mp_upgrade import errors
from contrib_mp_upgrade import notebook as notebook_lib
from contrib_mp_upgrade import rewrite
from contrib_mp_upgrade import workers


@dataclasses.dataclass
class Entry:
  """One path of the input, and what it becomes.

  Attributes:
    name: The path relative to the input root, with `/` separators (the
      file's name in single-file mode).
    path: The input path.
    kind: "dir", "python" (a `*.py` file), "notebook" (a `*.ipynb`
      file), "file" (copied as is) or "link" (a symbolic link recreated in
      the output).
    result: For "python" and "notebook": the `rewrite.FileResult`.
    source: For "python": the bytes read. For "notebook": its code cells as
      one Python source (`notebook_lib.Notebook.source`), or the bytes read
      when it could not be read as a notebook.
    output: For "python" and "notebook": the converted `source`. Starts as
      `result.new_source`; the `tf_upgrade_v2` pass may change it. What is
      written is `written`.
    link: For "link": the target to give the new link.
    tf_upgrade_v2_changed: Whether the `tf_upgrade_v2` pass changed it.
    blockers: For "python" and "notebook": what still stops `output` on
      TF 2.
    notebook: For a "notebook" read as one: the notebook and its cell map.
    keras2: For "python" and "notebook": `(output line, why)` of each use
      of Keras 2 API that Keras 3 refuses (`keras2.find`).
    tf1_lines: For "python" and "notebook": output lines that use TF 1's
      API as written from `tensorflow` (`tf1_api.lines`), before
      `tf_upgrade_v2` ran, if it did.
  """
  name: str
  path: str
  kind: str
  result: Optional[rewrite.FileResult] = None
  source: Optional[bytes] = None
  output: Optional[bytes] = None
  link: Optional[str] = None
  tf_upgrade_v2_changed: bool = False
  blockers: List[blockers_lib.Blocker] = dataclasses.field(
      default_factory=list)
  notebook: Optional[notebook_lib.Notebook] = None
  keras2: List[Tuple[int, str]] = dataclasses.field(default_factory=list)
  tf1_lines: List[int] = dataclasses.field(default_factory=list)

  @property
  def changed(self) -> bool:
    return self.kind in CODE_KINDS and (
        self.result.changed or self.tf_upgrade_v2_changed)

  @property
  def original(self) -> bytes:
    """The file's bytes as read."""
    return self.notebook.raw if self.notebook is not None else self.source

  @property
  def written(self) -> bytes:
    """The bytes to write: `output`, or the notebook rebuilt from it."""
    if self.notebook is None:
      return self.output
    if not self.changed:
      return self.notebook.raw
    return notebook_lib.join(self.notebook, self.output)

  def at(self, line: int, output: bool = False) -> str:
    """Where `line` of `source` (or of `output`) is, as the report says it.

    `12` in a Python file; `cell 3, line 2` in a notebook.
    """
    if self.notebook is None:
      return str(line)
    return notebook_lib.describe(
        self.notebook, self.output if output else self.source, line)

  def where(self, line: int, output: bool = False) -> str:
    """`train.py:12`, or `nb.ipynb cell 3, line 2`."""
    if self.notebook is None:
      return "{}:{}".format(self.name, line)
    return "{} {}".format(self.name, self.at(line, output))


# The kinds of entry whose code is converted.
CODE_KINDS = ("python", "notebook")


@dataclasses.dataclass
class Plan:
  """Everything a run will write, decided before anything is written."""
  entries: List[Entry] = dataclasses.field(default_factory=list)
  skipped: List[Tuple[str, str]] = dataclasses.field(default_factory=list)

  def python(self) -> List[Entry]:
    """Every entry whose code is Python: `*.py` files and notebooks.

    A notebook's `source` and `output` are its code cells as one Python
    source, so the converters and the report treat both alike; the report
    counts them apart ("2 Python files and 1 notebook").
    """
    return [e for e in self.entries if e.kind in CODE_KINDS]


def _inside(path: str, directory: str) -> bool:
  return os.path.commonpath([path, directory]) == directory


def _code_entry(name: str, path: str, data: bytes) -> Entry:
  """The entry of a `*.py` file or a notebook, not yet converted.

  A notebook that cannot be read as one (not JSON, not nbformat 4, a code
  cell that is not Python) gets its `result` now: not converted, and why.
  """
  if not name.endswith(notebook_lib.SUFFIX):
    return Entry(name=name, path=path, kind="python", source=data)
  try:
    notebook = notebook_lib.read(data)
  except notebook_lib.NotebookError as e:
    return Entry(name=name, path=path, kind="notebook", source=data,
                 output=data, result=rewrite.FileResult(
                     new_source=data, error=str(e),
                     mentions_api=(b"mixed_precision" in data and
                                   b"contrib" in data)))
  return Entry(name=name, path=path, kind="notebook", source=notebook.source,
               notebook=notebook)


def _settle_notebooks(entries: List[Entry]) -> None:
  """Names a converted notebook's errors by cell; checks it joins back."""
  for entry in entries:
    if entry.notebook is None:
      continue
    result, raw = entry.result, entry.notebook.raw
    mentions = b"mixed_precision" in raw and b"contrib" in raw
    why = result.error or notebook_lib.check(entry.notebook, entry.output)
    if why is not None:
      entry.result = rewrite.FileResult(
          new_source=entry.source, mentions_api=mentions,
          error=notebook_lib.relabel(entry.notebook, entry.source, why))
      entry.output = entry.source
    else:
      result.warnings = sorted(result.warnings + entry.notebook.warnings)
      # A TF 2.x message that names another line ("the policy set at line
      # 11") names it by cell, as the report names the line it is on.
      text = functools.partial(notebook_lib.relabel, entry.notebook,
                               entry.source)
      result.tf2x_notes = [(l, text(m)) for l, m in result.tf2x_notes]
      result.tf2x_lost = [(l, text(w), text(f))
                          for l, w, f in result.tf2x_lost]
      result.tf2x_stops = [(l, text(w), text(f))
                           for l, w, f in result.tf2x_stops]


def scan_file(infile: str, name: str, contrib_to_slim: bool = False,
              advance_iterations: bool = False) -> Plan:
  """Reads and upgrades one file (`--infile`)."""
  plan = Plan()
  try:
    with open(infile, "rb") as f:
      data = f.read()
  except OSError as e:
    raise errors.UpgradeError(
        "`--infile` {!r} could not be read ({}). Check its "
        "permissions.".format(infile, errors.describe_os_error(e))) from e
  entry = _code_entry(name, infile, data)
  if entry.result is None:
    # A large file goes to a worker process, as in a tree
    # (`workers._ALONE_BYTES`).
    workers.upgrade_all([entry], contrib_to_slim=contrib_to_slim,
                        advance_iterations=advance_iterations)
  plan.entries.append(entry)
  _settle_notebooks(plan.entries)
  return plan


def scan_tree(intree: str, copy_other_files: bool,
              progress: Optional[Callable[[int, int], None]] = None,
              jobs: Optional[int] = None,
              contrib_to_slim: bool = False,
              advance_iterations: bool = False) -> Plan:
  """Reads and upgrades every file under `intree`; writes nothing.

  Symbolic links are never followed. A link whose target is inside the
  tree is kept as a relative link (to the converted target); a dangling
  link, a link loop and a link that leaves the tree are skipped and
  reported. So are files and directories that cannot be read, and special
  files (a FIFO would block the reader forever).

  Args:
    intree: The input directory.
    copy_other_files: Whether files that are not `*.py` are part of the
      output.
    progress: Called with `(files done, files in all)` as Python files
      are converted, if given.
    jobs: Worker processes for libcst; None for one per core.
    contrib_to_slim: Passed to `rewrite.upgrade_source`.
    advance_iterations: Passed to `rewrite.upgrade_source`.

  Returns:
    The `Plan`.
  """
  plan = Plan()
  root = os.path.realpath(intree)

  # The walk keeps its own stack: a vendored tree 1,000 directories deep
  # would overflow Python's. Each directory's entry is added only once it
  # has been listed, so one that cannot be is skipped, not created empty.
  stack: List[Tuple[Iterator[os.DirEntry], str]] = []

  def enter(directory: str, prefix: str) -> None:
    try:
      with os.scandir(directory) as it:
        items = sorted(it, key=lambda item: item.name)
    except OSError as e:
      plan.skipped.append((prefix.rstrip("/") or ".", (
          "a directory that could not be listed ({}); nothing under it "
          "was converted or copied").format(errors.describe_os_error(e))))
      return
    if prefix:
      plan.entries.append(Entry(name=prefix.rstrip("/"), path=directory,
                                kind="dir"))
    stack.append((iter(items), prefix))

  enter(intree, "")
  while stack:
    items, prefix = stack[-1]
    item = next(items, None)
    if item is None:
      stack.pop()
      continue
    name = prefix + item.name
    try:
      if item.is_symlink():
        _scan_link(plan, item.path, name, root, copy_other_files)
      elif item.is_dir(follow_symlinks=False):
        enter(item.path, name + "/")
      elif not item.is_file(follow_symlinks=False):
        mode = item.stat(follow_symlinks=False).st_mode
        plan.skipped.append((name, "{}, not a regular file; not "
                                   "copied".format(special_kind(mode))))
      elif item.name.endswith((".py", notebook_lib.SUFFIX)):
        with open(item.path, "rb") as f:
          data = f.read()
        plan.entries.append(_code_entry(name, item.path, data))
      elif copy_other_files:
        with open(item.path, "rb"):
          pass  # Readable now; it is copied when the tree is written.
        plan.entries.append(Entry(name=name, path=item.path, kind="file"))
    except OSError as e:
      plan.skipped.append((name, "could not be read ({}); not "
                                 "copied".format(errors.describe_os_error(e))))

  workers.upgrade_all([e for e in plan.python() if e.result is None],
                      progress, jobs, contrib_to_slim, advance_iterations)
  _settle_notebooks(plan.python())
  return plan


def special_kind(mode: int) -> str:
  """`a FIFO (named pipe)`, `a socket`, `a device file`..."""
  if stat.S_ISFIFO(mode):
    return "a FIFO (named pipe)"
  if stat.S_ISSOCK(mode):
    return "a socket"
  if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
    return "a device file"
  return "a special file"


def _scan_link(plan: Plan, path: str, name: str, root: str,
               copy_other_files: bool) -> None:
  target = os.readlink(path)
  try:
    target_stat = os.stat(path)
  except OSError as e:
    if e.errno == errno.ELOOP:
      why = "a symbolic link loop (-> {!r}); not copied".format(target)
    elif e.errno in (errno.ENOENT, errno.ENOTDIR):
      why = ("a dangling symbolic link (-> {!r}): its target does not "
             "exist; not copied").format(target)
    else:
      why = "a symbolic link (-> {!r}) that cannot be followed ({}); not " \
            "copied".format(target, errors.describe_os_error(e))
    plan.skipped.append((name, why))
    return
  real = os.path.realpath(path)
  if not _inside(real, root):
    plan.skipped.append((name, (
        "a symbolic link to {!r}, outside the input tree; not copied. "
        "Convert its target separately if it is code.").format(target)))
    return
  if not (copy_other_files or name.endswith((".py", notebook_lib.SUFFIX)) or
          stat.S_ISDIR(target_stat.st_mode)):
    return
  relative = os.path.relpath(real,
                             os.path.realpath(os.path.dirname(path)))
  plan.entries.append(Entry(name=name, path=path, kind="link",
                            link=relative))

