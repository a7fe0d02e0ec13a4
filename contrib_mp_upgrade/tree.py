# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Reads an input tree into a plan, and writes a plan all or nothing.

A run has two phases. `scan_tree` and `scan_file` read every input and
decide everything: what each file becomes, and what is skipped and why
(dangling symbolic links, link loops, unreadable files, FIFOs). Nothing is
written in that phase. A `Commit` then writes the result so that a failure
(a full disk, a read-only directory, a crash) or a signal (Ctrl-C, see
`stop_on_signals`) leaves nothing behind:

* a new tree is built in a temporary directory beside `--outtree` and
  renamed into place at the end, so `--outtree` either appears complete or
  does not appear, and a failed run can simply be run again;
* in-place edits are first written to temporary files beside their
  targets, and only once all of them are written are they renamed over the
  originals, with the stop signals held until the last rename; a rename
  that fails puts back the ones before it (each original is hard-linked
  beside itself first);
* a report to a pipe or a device is written before any rename, and a
  stop signal still stops that write.

Worker processes for libcst (`_Workers`) each have a pipe of their own;
the parent kills them on Ctrl-C or on any error, and sees at once a worker
that died.

This module needs only the standard library (and libcst, via `rewrite`).
"""

import collections
import contextlib
import dataclasses
import errno
import multiprocessing
import multiprocessing.connection
import os
import re
import shutil
import signal
import stat
import sys
import tempfile
import threading
from typing import Callable, Dict, Iterator, List, Optional, Tuple, TypeVar

from contrib_mp_upgrade import blockers as blockers_lib
from contrib_mp_upgrade import notebook as notebook_lib
from contrib_mp_upgrade import rewrite


class UpgradeError(Exception):
  """The command could not do its job; nothing was written."""


class Interrupted(BaseException):
  """A signal (Ctrl-C, SIGTERM, SIGHUP) stopped the command.

  A `BaseException`, as `KeyboardInterrupt` is, so that no `except
  Exception` on the way up swallows it.

  Attributes:
    signum: The signal's number.
  """

  def __init__(self, signum: int):
    super().__init__(signal.Signals(signum).name)
    self.signum = signum


# The signals that stop the command, cleanly.
_STOP_SIGNALS = tuple(getattr(signal, name) for name in
                      ("SIGINT", "SIGTERM", "SIGHUP")
                      if hasattr(signal, name))


def _in_main_thread() -> bool:
  return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
  """Turns the first stop signal into `Interrupted`, and ignores the rest.

  The first Ctrl-C unwinds the run, which ends the workers and removes
  whatever was staged on its way out; a second one, which impatient users
  send, must not interrupt that cleanup. The previous handlers are back
  when the block ends. Outside the main thread, where Python allows no
  handlers, it does nothing.
  """
  if not _in_main_thread():
    yield
    return

  def stop(signum, frame):
    del frame  # Unused.
    for other in _STOP_SIGNALS:
      signal.signal(other, signal.SIG_IGN)
    raise Interrupted(signum)

  previous = {signum: signal.signal(signum, stop)
              for signum in _STOP_SIGNALS}
  try:
    yield
  finally:
    for signum, handler in previous.items():
      signal.signal(signum, handler)


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
  """Holds stop signals until the block ends (they are then delivered)."""
  if not (_in_main_thread() and hasattr(signal, "pthread_sigmask")):
    yield
    return
  previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
  try:
    yield
  finally:
    signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def readable(text: str) -> str:
  """`text` with each undecodable file-name byte written as `\\xNN`.

  File names that are not UTF-8 (a latin-1 `é` in an old tree) reach Python
  as lone surrogates, which no UTF-8 report or terminal can hold.
  """
  return _SURROGATE.sub(lambda m: "\\x{:02x}".format(
      ord(m.group()) - 0xDC00), text)


_SURROGATE = re.compile("[\udc80-\udcff]")


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


def describe_os_error(error: OSError) -> str:
  """`[Errno 28] No space left on device`, without the file name."""
  if error.errno is not None and error.strerror:
    return "[Errno {}] {}".format(error.errno, error.strerror)
  return str(error)


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


# Below this many lines for libcst (a few seconds of work), worker
# processes cost more than they save: each starts a Python and imports
# libcst, about 0.3 s.
_PARALLEL_LINES = 4000
# A file this large or larger goes to a worker process even when one process
# would do (`--jobs 1`, or a single file): libcst takes about 800 bytes of
# memory per byte of source, and when an allocation fails its native parser
# aborts the process that runs it, with a line of its own and nothing else.
# A dead worker is reported, with the file it held; the command's own death
# would not be. Smaller files stay here: a worker costs about 0.3 s to start.
_ALONE_BYTES = 1 << 17


def _workers() -> int:
  try:
    return len(os.sched_getaffinity(0))
  except AttributeError:  # Not on Linux.
    return os.cpu_count() or 1


def upgrade_all(entries: List[Entry],
                progress: Optional[Callable[[int, int], None]] = None,
                jobs: Optional[int] = None,
                contrib_to_slim: bool = False) -> None:
  """Fills in `result` and `output` of each Python entry that has `source`.

  A file that cannot use the API is read with the standard library's
  parser, in this process. The others go through libcst, which is about
  30 times slower, on every core when there are enough of them, and in one
  worker process even with `jobs=1` when a file is large enough to run the
  process out of memory (`_ALONE_BYTES`). Worker processes are started
  fresh ("spawn"): the caller may be a process with threads (TensorFlow's),
  which a fork could deadlock.

  Args:
    entries: The entries; each has `source` set.
    progress: Called with `(done, total)` as files finish, if given.
    jobs: Worker processes; None for one per available core.
    contrib_to_slim: Passed to `rewrite.upgrade_source`.
  """
  total = len(entries)
  done = 0
  heavy = [e for e in entries
           if rewrite.needs_libcst(e.source, contrib_to_slim)]
  light = [e for e in entries
           if not rewrite.needs_libcst(e.source, contrib_to_slim)]

  def finish(entry: Entry, result: rewrite.FileResult) -> None:
    nonlocal done
    entry.result, entry.output = result, result.new_source
    done += 1
    if progress is not None:
      progress(done, total)

  for entry in light:
    finish(entry, rewrite.upgrade_source(entry.source, contrib_to_slim))
  jobs = _workers() if jobs is None else jobs
  lines = sum(e.source.count(b"\n") for e in heavy)
  count = min(jobs, len(heavy))
  if count < 2 or lines < _PARALLEL_LINES:
    if all(len(e.source) < _ALONE_BYTES for e in heavy):
      for entry in heavy:
        finish(entry, rewrite.upgrade_source(entry.source, contrib_to_slim))
      return
    count = 1
  with _Workers(count, contrib_to_slim) as workers:
    for i, result in workers.convert([e.source for e in heavy],
                                     [e.name for e in heavy]):
      finish(heavy[i], result)


class _Workers:
  """Worker processes that convert files with libcst, one file at a time.

  Each worker has a pipe of its own, and the parent hands it the next file
  when it returns the last one. Nothing is shared between workers: a
  `multiprocessing.Pool`'s workers read one queue under one lock, and a
  worker killed while it held that lock (the OOM killer, a crash in
  libcst's native parser) hung the pool's shutdown forever. Here the parent
  waits on the pipes of the busy workers, where a death reads as the end of
  the pipe, so it is seen as it happens.

  Leaving the `with` block ends the workers: at once, by SIGKILL, on an
  exception (Ctrl-C, a dead worker), and by closing their pipes otherwise.
  """

  def __init__(self, count: int, contrib_to_slim: bool):
    context = multiprocessing.get_context("spawn")
    self._processes = []
    self._pipes = []
    try:
      for _ in range(count):
        pipe, child_end = context.Pipe()
        self._pipes.append(pipe)
        try:
          process = context.Process(target=_serve,
                                    args=(child_end, contrib_to_slim),
                                    daemon=True)
          with _children_hold_stop_signals():
            process.start()
          self._processes.append(process)
        finally:
          # Only the worker holds its end: if it dies, the pipe ends.
          child_end.close()
    except BaseException:
      self._end(kill=True)
      raise

  def __enter__(self) -> "_Workers":
    return self

  def __exit__(self, exc_type, exc, tb) -> None:
    self._end(kill=exc_type is not None)

  def _end(self, kill: bool) -> None:
    for pipe in self._pipes:
      pipe.close()  # A waiting worker reads the end of its pipe, and exits.
    for process in self._processes:
      if kill:
        process.kill()
    for process in self._processes:
      process.join()

  def convert(self, sources: List[bytes], names: List[str]
              ) -> Iterator[Tuple[int, rewrite.FileResult]]:
    """Yields `(index, result)` for each source, in the order they finish.

    A worker with nothing left to do is let go at once: each holds libcst
    and its trees, and memory is what a large run runs out of.

    Raises:
      UpgradeError: A worker process ended before it returned its file.
    """
    queue = collections.deque(range(len(sources)))
    busy = {}  # pipe -> (process, index of the file it converts)

    def hand_out(pipe, process) -> None:
      if not queue:
        pipe.close()  # It reads the end of its pipe, and exits.
        return
      i = queue.popleft()
      busy[pipe] = (process, i)
      try:
        pipe.send((i, sources[i]))
      except OSError:  # Its end of the pipe is closed: it died.
        self._died(process, busy, queue, names, sources)

    for pipe, process in zip(self._pipes, self._processes):
      hand_out(pipe, process)
    while busy:
      # A worker that dies closes its end of its pipe, which then reads as
      # ended: the wait sees a death as it sees a result.
      for pipe in multiprocessing.connection.wait(list(busy)):
        process, i = busy[pipe]
        try:
          j, result, error = pipe.recv()
        except (EOFError, OSError):  # It died before it sent its file back.
          self._died(process, busy, queue, names, sources)
        del busy[pipe]
        if error is not None:
          raise error
        assert j == i, (j, i)
        yield i, result
        hand_out(pipe, process)

  def _died(self, process, busy, queue, names: List[str],
            sources: List[bytes]) -> None:
    """Raises `UpgradeError` for `process`, naming the files not done."""
    process.join()
    code = process.exitcode
    how = "ended with status {}".format(code)
    if code is not None and code < 0 and -code in set(signal.Signals):
      how = "killed by {}".format(signal.Signals(-code).name)
    (held,) = [i for p, i in busy.values() if p is process] or [None]
    pending = sorted(names[i] for i in
                     list(queue) + [i for _, i in busy.values()])
    what = "A worker process" if held is None else (
        "The worker process converting {} ({})".format(
            names[held], _size(len(sources[held]))))
    if len(self._processes) > 1:
      advice = ("If the machine ran out of memory, run again with "
                "`--jobs 1`, which converts one file at a time; if it keeps "
                "happening, one of the files not yet converted is the "
                "cause: {}{}.".format(", ".join(pending[:5]),
                                      ", ..." if len(pending) > 5 else ""))
    else:
      advice = ("If the machine ran out of memory (libcst takes about 800 "
                "bytes of memory per byte of a file it converts), free "
                "memory, or convert that file on a machine with more.")
    raise UpgradeError("{} was {}; nothing was written. {}".format(
        what, how, advice))


def _size(count: int) -> str:
  """A byte count for people: `1.6 MB`, `40 KB`."""
  if round(count / 1e3) >= 1000:
    return "{:.1f} MB".format(count / 1e6)
  return "{} KB".format(max(1, round(count / 1e3)))


@contextlib.contextmanager
def _children_hold_stop_signals() -> Iterator[None]:
  """Processes started in the block begin with the stop signals held.

  A new program keeps its parent's blocked signals, and Python leaves them
  so: the worker holds the terminal's Ctrl-C until `_serve` ignores it. A
  worker that caught it while it imported libcst (tenths of a second)
  printed a `KeyboardInterrupt` traceback. The parent's own signals wait
  until the block ends.
  """
  try:
    # Started here, if it is not running: starting it unblocks SIGINT and
    # SIGTERM in this process (CPython's `resource_tracker` does), which
    # inside the block would end the hold for the worker.
    from multiprocessing import resource_tracker  # pylint: disable=g-import-not-at-top
    resource_tracker.ensure_running()
  except (ImportError, AttributeError):  # Not on this platform.
    pass
  with signals_deferred():
    yield


def _serve(pipe, contrib_to_slim: bool) -> None:
  """A worker's loop: converts each file it is sent, until its pipe ends.

  It ignores Ctrl-C: the terminal sends it to the whole group, and the
  parent, which decides what to clean up, ends the workers.
  """
  signal.signal(signal.SIGINT, signal.SIG_IGN)  # Drops a Ctrl-C it held.
  if hasattr(signal, "pthread_sigmask"):
    # A SIGTERM or SIGHUP it held ends it now, as it ends the parent.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
  while True:
    try:
      i, source = pipe.recv()
    except EOFError:
      return
    try:
      result, error = rewrite.upgrade_source(source, contrib_to_slim), None
    except Exception as e:  # pylint: disable=broad-except
      result, error = None, e  # Raised again in the parent, as a pool did.
    pipe.send((i, result, error))


def scan_file(infile: str, name: str, contrib_to_slim: bool = False) -> Plan:
  """Reads and upgrades one file (`--infile`)."""
  plan = Plan()
  try:
    with open(infile, "rb") as f:
      data = f.read()
  except OSError as e:
    raise UpgradeError("`--infile` {!r} could not be read ({}). Check its "
                       "permissions.".format(infile, describe_os_error(e)))
  entry = _code_entry(name, infile, data)
  if entry.result is None:
    # A large file goes to a worker process, as in a tree (`_ALONE_BYTES`).
    upgrade_all([entry], contrib_to_slim=contrib_to_slim)
  plan.entries.append(entry)
  _settle_notebooks(plan.entries)
  return plan


def scan_tree(intree: str, copy_other_files: bool,
              progress: Optional[Callable[[int, int], None]] = None,
              jobs: Optional[int] = None,
              contrib_to_slim: bool = False) -> Plan:
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
          "was converted or copied").format(describe_os_error(e))))
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
                                 "copied".format(describe_os_error(e))))

  upgrade_all([e for e in plan.python() if e.result is None], progress, jobs,
              contrib_to_slim)
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
            "copied".format(target, describe_os_error(e))
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


def _write_bytes(path: str, data: bytes) -> None:
  with open(path, "wb") as f:
    f.write(data)
    f.flush()


def _umask() -> int:
  mask = os.umask(0)
  os.umask(mask)
  return mask


def _materialize(plan: Plan, stage: str) -> None:
  """Writes every entry of `plan` under the directory `stage`."""
  for entry in plan.entries:
    target = os.path.join(stage, *entry.name.split("/"))
    if entry.kind == "dir":
      os.makedirs(target, exist_ok=True)
      continue
    os.makedirs(os.path.dirname(target), exist_ok=True)
    if entry.kind == "link":
      os.symlink(entry.link, target)
    elif entry.kind in CODE_KINDS:
      _write_bytes(target, entry.written)
      if entry.changed:
        shutil.copymode(entry.path, target)
      else:
        shutil.copystat(entry.path, target)
    else:
      shutil.copy2(entry.path, target)


def _fail(what: str, error: OSError, where: str) -> UpgradeError:
  return UpgradeError("{} ({}). Nothing was written: {}".format(
      what, describe_os_error(error), where))


_T = TypeVar("_T")


class Commit:
  """Finishes a run: the output and the report appear together, or neither.

  `stage_*` methods write into temporary places and raise `UpgradeError`
  after removing what they wrote; `finish` renames everything into place;
  `abort` removes whatever was staged.
  """

  def __init__(self):
    self._undo: List[Callable[[], None]] = []
    self._renames: List[Tuple[str, str]] = []
    self._moves_into: Optional[Tuple[str, str]] = None
    self._writes: List[Tuple[int, bytes, str, str]] = []
    # (path, why) of what could not be removed once all was in place.
    self.leftovers: List[Tuple[str, str]] = []

  def abort(self) -> None:
    for undo in reversed(self._undo):
      undo()
    self._undo = []

  def _makedirs(self, directory: str) -> None:
    """`os.makedirs`; `abort` removes the directories it made."""
    missing = []
    while directory and not os.path.isdir(directory):
      missing.append(directory)
      directory = os.path.dirname(directory)
    for path in reversed(missing):
      self._create(lambda path=path: os.mkdir(path),
                   lambda _, path=path: _rmdir(path))

  def _create(self, make: Callable[[], _T],
              undo: Callable[[_T], None]) -> _T:
    """Returns `make()`, with `undo` of what it made registered for `abort`.

    A stop signal waits until both are done: landing between them, it left
    what `make` created behind.
    """
    with signals_deferred():
      made = make()
      self._undo.append(lambda: undo(made))
    return made

  def _create_file(self, path: str) -> str:
    """Creates an empty temporary file beside `path`; returns its path."""
    def make() -> Tuple[int, str]:
      return tempfile.mkstemp(
          prefix=".{}.".format(os.path.basename(path)),
          suffix=".contrib-mp-upgrade",
          dir=os.path.dirname(os.path.abspath(path)))

    fd, temp = self._create(make, lambda made: _remove(made[1]))
    os.close(fd)
    return temp

  def stage_tree(self, plan: Plan, outtree: str,
                 extra: Optional[Dict[str, bytes]] = None) -> None:
    """Builds the new tree in a temporary directory beside `outtree`.

    Args:
      plan: What to write.
      outtree: The directory to create.
      extra: `{relative path: bytes}` of more files to write in it (the
        report, when `--reportfile` is inside `--outtree`).
    """
    outtree = os.path.abspath(outtree)
    parent = os.path.dirname(outtree)
    try:
      self._makedirs(parent)
      stage = self._create(lambda: tempfile.mkdtemp(
          prefix=".{}.contrib-mp-upgrade-".format(os.path.basename(outtree)),
          dir=parent), remove_tree)
      inside = False
    except OSError as e:
      if not (os.path.isdir(outtree) and os.access(outtree, os.W_OK)):
        raise _fail("`--outtree` {!r} cannot be created in {!r}".format(
            outtree, parent), e, "choose a writable location.")
      # The parent is read-only but the (empty) outtree is not: build the
      # tree inside it, and move the top-level entries up at the end.
      stage = self._create(lambda: tempfile.mkdtemp(
          prefix=".contrib-mp-upgrade-", dir=outtree), remove_tree)
      inside = True
    try:
      _materialize(plan, stage)
      for name, data in (extra or {}).items():
        path = os.path.join(stage, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        _write_bytes(path, data)
        os.chmod(path, 0o666 & ~_umask())
      os.chmod(stage, 0o777 & ~_umask())
    except OSError as e:
      self.abort()
      raise _fail("The converted tree could not be written", e,
                  "`--outtree` {!r} was not created; fix the cause and run "
                  "the command again.".format(outtree))
    if inside:
      self._moves_into = (stage, outtree)
    else:
      self._renames.append((stage, outtree))

  def stage_inplace(self, entries: List[Entry]) -> None:
    """Writes each changed file to a temporary file beside it."""
    for entry in entries:
      try:
        temp = self._create_file(entry.path)
      except OSError as e:
        self.abort()
        raise _fail("{!r} cannot be rewritten in place".format(entry.path),
                    e, "no input file was changed.")
      try:
        _write_bytes(temp, entry.written)
        shutil.copymode(entry.path, temp)
      except OSError as e:
        self.abort()
        raise _fail("{!r} cannot be rewritten in place".format(entry.path),
                    e, "no input file was changed.")
      self._renames.append((temp, entry.path))

  def stage_file(self, data: bytes, path: str, flag: str,
                 mode_from: Optional[str] = None) -> None:
    """Writes `data` to a temporary file beside `path`.

    A `path` that is a device or a pipe (`/dev/null`, `/dev/stdout`) is
    written to by `write_streams` instead: renaming over it would replace
    it. A directory is refused now: renaming over it would fail only once
    the other outputs were in place.
    """
    stream = _stream_fd(path)
    if stream is not None:
      # `/dev/stdout` with stdout redirected to a file is that file: staged
      # beside it and renamed, it replaced the `/dev/stdout` link itself.
      # Written through the command's own descriptor, at its offset.
      sys.stdout.flush()
      self._stage_stream(os.dup(stream), data, flag, path)
      return
    # A link is written through: the link stays, its target is replaced.
    path = os.path.realpath(path)
    if os.path.isdir(path):
      self.abort()
      raise UpgradeError(
          "`{}` {!r} is a directory; nothing was written. Give the path of "
          "a file, for example {!r}.".format(
              flag, path, os.path.join(
                  path, "report.txt" if flag == "--reportfile"
                  else "converted.py")))
    if os.path.exists(path) and not os.path.isfile(path):
      try:
        # Opened now, without waiting: a FIFO nobody reads is an error
        # here, not a wait at the end with Ctrl-C held.
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        os.set_blocking(fd, True)
      except OSError as e:
        self.abort()
        raise _fail("`{}` {!r} cannot be written".format(flag, path), e,
                    "choose a writable path.")
      self._stage_stream(fd, data, flag, path)
      return
    directory = os.path.dirname(os.path.abspath(path))
    temp = None
    try:
      self._makedirs(directory)
      temp = self._create_file(path)
      _write_bytes(temp, data)
      if mode_from is not None:
        shutil.copymode(mode_from, temp)
      else:
        os.chmod(temp, 0o666 & ~_umask())
    except OSError as e:
      self.abort()
      raise _fail("`{}` {!r} cannot be written".format(flag, path), e,
                  "choose a writable path.")
    self._renames.append((temp, path))

  def _stage_stream(self, fd: int, data: bytes, flag: str,
                    path: str) -> None:
    """Keeps open `fd` for `write_streams`; `abort` closes it."""
    if not self._writes:
      self._undo.append(self._close_streams)
    self._writes.append((fd, data, flag, path))

  def write_streams(self) -> None:
    """Writes what goes to a pipe or a device (`--reportfile /dev/stdout`).

    Such a write cannot be taken back, so it comes before the renames, and
    a stop signal still stops it: a reader that stopped reading (a paused
    pager) must not make the command impossible to stop. If it fails (the
    reader went away), nothing has been put in place yet.
    """
    for fd, data, flag, path in self._writes:
      try:
        with open(fd, "wb", closefd=False) as f:
          f.write(data)
      except OSError as e:
        raise _fail("`{}` {!r} could not be written".format(flag, path), e,
                    "fix the cause and run the command again.") from e
    self._close_streams()

  def _close_streams(self) -> None:
    writes, self._writes = self._writes, []
    for fd, _, _, _ in writes:
      os.close(fd)

  def finish(self) -> None:
    """Renames everything staged into place; if one rename fails, none.

    A file a rename replaces is hard-linked to a backup beside it first,
    so that a later rename that fails (an immutable file, a path that
    became a directory) puts back what the earlier ones replaced. What
    could not be removed once all is in place is listed in `leftovers`.

    Raises:
      UpgradeError: A rename failed. Everything is as it was before, unless
        the message names what stays changed and where its original is.
    """
    self.write_streams()  # If the caller has not: nothing left to write.
    # (how to take it back, the path it changed, the original's backup)
    undo: List[Tuple[Callable[[], None], str, Optional[str]]] = []
    backups: List[str] = []
    path = None
    try:
      if self._moves_into is not None:
        stage, outtree = self._moves_into
        path = outtree
        for name in os.listdir(stage):
          os.rename(os.path.join(stage, name), os.path.join(outtree, name))
          undo.append((lambda name=name: os.rename(
              os.path.join(outtree, name), os.path.join(stage, name)),
                       os.path.join(outtree, name), None))
      for temp, path in self._renames:
        backup = _backup(path)
        if backup is not None:
          backups.append(backup)
        empty_directory = os.path.isdir(path) and not os.path.islink(path)
        if os.path.isdir(temp):
          os.rename(temp, path)
        else:
          os.replace(temp, path)
        if backup is not None:
          undo.append((lambda backup=backup, path=path: os.replace(
              backup, path), path, backup))
        else:
          def take_back(temp=temp, path=path, empty=empty_directory):
            os.rename(path, temp)
            if empty:
              os.mkdir(path)
          undo.append((take_back, path, None))
    except OSError as e:
      stuck = []
      for take_back, changed, backup in reversed(undo):
        try:
          take_back()
        except OSError as undo_error:
          stuck.append((changed, backup, undo_error))
      kept = {backup for _, backup, _ in stuck}
      for backup in backups:
        if backup not in kept:
          _remove(backup)
      if stuck:
        raise UpgradeError(
            "{!r} could not be put in place ({}), and what was renamed "
            "before it could not all be put back: {}. Put those back by "
            "hand (or run the command again once the cause is fixed); "
            "nothing else was changed.".format(
                path, describe_os_error(e), "; ".join(
                    "{!r} holds the new version ({}){}".format(
                        changed, describe_os_error(undo_error),
                        ", its original is {!r}".format(backup)
                        if backup else "")
                    for changed, backup, undo_error in stuck))) from e
      raise _fail("{!r} could not be put in place".format(path), e,
                  "what was already renamed was put back; fix the cause "
                  "and run the command again.") from e
    self._undo = []
    for backup in backups:
      self._remove_or_list(backup, os.remove)
    if self._moves_into is not None:
      self._remove_or_list(self._moves_into[0], os.rmdir)

  def _remove_or_list(self, path: str, remove: Callable[[str], None]) -> None:
    """Removes `path`; if that fails, lists it in `leftovers` with why."""
    try:
      remove(path)
    except FileNotFoundError:
      pass
    except OSError as e:
      self.leftovers.append((path, describe_os_error(e)))


def _stream_fd(path: str) -> Optional[int]:
  """The descriptor `path` names (`/dev/stdout`, `/dev/fd/N`,
  `/proc/self/fd/N`, or a link to one of them), or None."""
  path = os.path.abspath(path)
  for _ in range(40):  # Links to links; a loop ends here.
    match = _FD_PATH.match(path)
    if match:
      return (int(match.group(1)) if match.group(1) else
              ("stdin", "stdout", "stderr").index(match.group(2)))
    if not os.path.islink(path):
      return None
    path = os.path.normpath(os.path.join(os.path.dirname(path),
                                         os.readlink(path)))
  return None


_FD_PATH = re.compile(
    r"^/(?:dev/fd|proc/self/fd)/(\d+)$|^/dev/(stdin|stdout|stderr)$")


def _backup(path: str) -> Optional[str]:
  """Hard-links what is at `path` (not a directory) to a name beside it.

  Returns:
    The backup's path, or None if nothing but an empty directory (which
    `os.rename` replaces, and the undo of the rename leaves) is at `path`.
  """
  if not os.path.lexists(path) or (os.path.isdir(path) and
                                   not os.path.islink(path)):
    return None
  directory, name = os.path.split(os.path.abspath(path))
  for _ in range(100):
    backup = os.path.join(directory, ".{}.{}.contrib-mp-upgrade".format(
        name, os.urandom(4).hex()))
    try:
      os.link(path, backup, follow_symlinks=False)
    except FileExistsError:
      continue
    except OSError:  # No hard links here (FAT, some FUSE file systems).
      try:
        shutil.copy2(path, backup, follow_symlinks=False)
      except BaseException:
        _remove(backup)  # A copy cut short (a full disk) is no backup.
        raise
    return backup
  raise FileExistsError(errno.EEXIST, "no free backup name", path)


def _rmdir(path: str) -> None:
  try:
    os.rmdir(path)
  except OSError:
    pass


def _remove(path: str) -> None:
  try:
    os.remove(path)
  except OSError:
    pass


def remove_tree(path: str) -> None:
  """Removes a directory tree, however deep, ignoring errors.

  `shutil.rmtree` recurses once per level, so a staging tree as deep as a
  vendored input (1,000 levels) would fail to be removed.
  """
  stack = [(path, False)]
  while stack:
    directory, listed = stack.pop()
    if listed:
      try:
        os.rmdir(directory)
      except OSError:
        pass
      continue
    stack.append((directory, True))
    try:
      with os.scandir(directory) as it:
        items = list(it)
    except OSError:
      continue
    for item in items:
      if item.is_dir(follow_symlinks=False):
        stack.append((item.path, False))
      else:
        _remove(item.path)
