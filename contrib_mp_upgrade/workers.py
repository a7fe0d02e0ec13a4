# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The worker processes that convert files with libcst, and when to use them.

libcst is about 30 times slower than the standard library's parser, so
`upgrade_all` converts the files that use the API on every core when there
are enough of them, and a file large enough to run a process out of memory
in a worker of its own. Each worker (`_Workers`) has a pipe of its own; the
parent kills them on Ctrl-C or on any error, and sees at once a worker
that died.

This module needs only the standard library (and libcst, via `rewrite`).
"""

import collections
import contextlib
import multiprocessing
import multiprocessing.connection
import os
import signal
from typing import Callable, Iterator, List, Optional, Protocol, Tuple

from contrib_mp_upgrade import errors
from contrib_mp_upgrade import rewrite
from contrib_mp_upgrade import signals


class Job(Protocol):
  """What `upgrade_all` needs of a file; in a run, a `walk.Entry`.

  It reads `name` and `source`, and sets `result` and `output`. Declared
  here because the walk imports this module, not the other way round.
  """
  name: str
  source: Optional[bytes]
  result: Optional[rewrite.FileResult]
  output: Optional[bytes]


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


def upgrade_all(entries: List[Job],
                progress: Optional[Callable[[int, int], None]] = None,
                jobs: Optional[int] = None,
                contrib_to_slim: bool = False,
                advance_iterations: bool = False) -> None:
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
    advance_iterations: Passed to `rewrite.upgrade_source`.
  """
  total = len(entries)
  done = 0
  heavy = [e for e in entries
           if rewrite.needs_libcst(e.source, contrib_to_slim)]
  light = [e for e in entries
           if not rewrite.needs_libcst(e.source, contrib_to_slim)]

  def finish(entry: Job, result: rewrite.FileResult) -> None:
    nonlocal done
    entry.result, entry.output = result, result.new_source
    done += 1
    if progress is not None:
      progress(done, total)

  for entry in light:
    finish(entry, rewrite.upgrade_source(entry.source, contrib_to_slim,
                                         advance_iterations))
  jobs = _workers() if jobs is None else jobs
  lines = sum(e.source.count(b"\n") for e in heavy)
  count = min(jobs, len(heavy))
  if count < 2 or lines < _PARALLEL_LINES:
    if all(len(e.source) < _ALONE_BYTES for e in heavy):
      for entry in heavy:
        finish(entry, rewrite.upgrade_source(entry.source, contrib_to_slim,
                                         advance_iterations))
      return
    count = 1
  with _Workers(count, contrib_to_slim, advance_iterations) as workers:
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

  def __init__(self, count: int, contrib_to_slim: bool,
               advance_iterations: bool = False):
    context = multiprocessing.get_context("spawn")
    self._processes = []
    self._pipes = []
    try:
      for _ in range(count):
        pipe, child_end = context.Pipe()
        self._pipes.append(pipe)
        try:
          process = context.Process(target=_serve,
                                    args=(child_end, contrib_to_slim,
                                          advance_iterations),
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
      errors.UpgradeError: A worker process ended before it returned its file.
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
    raise errors.UpgradeError(
        "{} was {}; nothing was written. {}".format(what, how, advice))


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
  with signals.signals_deferred():
    yield


def _serve(pipe, contrib_to_slim: bool,
           advance_iterations: bool = False) -> None:
  """A worker's loop: converts each file it is sent, until its pipe ends.

  It ignores Ctrl-C: the terminal sends it to the whole group, and the
  parent, which decides what to clean up, ends the workers.
  """
  signal.signal(signal.SIGINT, signal.SIG_IGN)  # Drops a Ctrl-C it held.
  if hasattr(signal, "pthread_sigmask"):
    # A SIGTERM or SIGHUP it held ends it now, as it ends the parent.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, signals.STOP_SIGNALS)
  while True:
    try:
      i, source = pipe.recv()
    except EOFError:
      return
    try:
      result, error = rewrite.upgrade_source(
          source, contrib_to_slim, advance_iterations), None
    except Exception as e:  # pylint: disable=broad-except
      result, error = None, e  # Raised again in the parent, as a pool did.
    pipe.send((i, result, error))

