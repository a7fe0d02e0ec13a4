# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Writes a plan all or nothing: the output and the report, or neither.

A `Commit` writes what the walk decided (`walk.Plan`) so that a failure (a
full disk, a read-only directory, a crash) or a signal (Ctrl-C, see
`signals`) leaves nothing behind:

* a new tree is built in a temporary directory beside `--outtree` and
  renamed into place at the end, so `--outtree` either appears complete or
  does not appear, and a failed run can simply be run again;
* in-place edits are first written to temporary files beside their
  targets, and only once all of them are written are they renamed over the
  originals, with the stop signals held until the last rename; a rename
  that fails puts back the ones before it (each original is hard-linked
  beside itself first);
* an input file that no longer holds what was read (a user's editor save,
  a `git checkout` while the run converted it) is not replaced: it counts
  as a failed rename, so every file is left as the user left it, and the
  message names it;
* a report to a pipe or a device is written before any rename, and a
  stop signal still stops that write.

This module needs only the standard library (and libcst, via `walk`).
"""

import errno
import os
import re
import shutil
import sys
import tempfile
from typing import Callable, Dict, List, Optional, Tuple, TypeVar

from contrib_mp_upgrade import errors
from contrib_mp_upgrade import signals
from contrib_mp_upgrade import walk


def _write_bytes(path: str, data: bytes) -> None:
  with open(path, "wb") as f:
    f.write(data)
    f.flush()


def _umask() -> int:
  mask = os.umask(0)
  os.umask(mask)
  return mask


def _materialize(plan: walk.Plan, stage: str) -> None:
  """Writes every entry of `plan` under the directory `stage`."""
  for entry in plan.entries:
    target = os.path.join(stage, *entry.name.split("/"))
    if entry.kind == "dir":
      os.makedirs(target, exist_ok=True)
      continue
    os.makedirs(os.path.dirname(target), exist_ok=True)
    if entry.kind == "link":
      os.symlink(entry.link, target)
    elif entry.kind in walk.CODE_KINDS:
      _write_bytes(target, entry.written)
      if entry.changed:
        shutil.copymode(entry.path, target)
      else:
        shutil.copystat(entry.path, target)
    else:
      shutil.copy2(entry.path, target)


def _fail(what: str, error: OSError, where: str) -> errors.UpgradeError:
  return errors.UpgradeError("{} ({}). Nothing was written: {}".format(
      what, errors.describe_os_error(error), where))


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
    # In place: {path: the bytes read from it}, checked before its rename.
    self._expected: Dict[str, bytes] = {}
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
    with signals.signals_deferred():
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

  def stage_tree(self, plan: walk.Plan, outtree: str,
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
            outtree, parent), e, "choose a writable location.") from e
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
                  "the command again.".format(outtree)) from e
    if inside:
      self._moves_into = (stage, outtree)
    else:
      self._renames.append((stage, outtree))

  def stage_inplace(self, entries: List[walk.Entry]) -> None:
    """Writes each changed file to a temporary file beside it."""
    for entry in entries:
      try:
        temp = self._create_file(entry.path)
      except OSError as e:
        self.abort()
        raise _fail("{!r} cannot be rewritten in place".format(entry.path),
                    e, "no input file was changed.") from e
      try:
        _write_bytes(temp, entry.written)
        shutil.copymode(entry.path, temp)
      except OSError as e:
        self.abort()
        raise _fail("{!r} cannot be rewritten in place".format(entry.path),
                    e, "no input file was changed.") from e
      self._renames.append((temp, entry.path))
      self._expected[entry.path] = entry.original

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
      raise errors.UpgradeError(
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
                    "choose a writable path.") from e
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
                  "choose a writable path.") from e
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
      errors.UpgradeError: A rename failed. Everything is as it was
        before, unless the message names what stays changed and where its
        original is.
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
        if path in self._expected:
          # The backup is a hard link of what is about to be replaced.
          _check_unchanged(path, backup, self._expected[path])
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
      if isinstance(e, _ChangedMeanwhile) and not stuck:
        raise errors.UpgradeError(
            "{!r} changed while the command ran: it no longer holds what "
            "the command read and converted. It was left as you left it, "
            "and so was every other file (the run is all or nothing); "
            "nothing was written. Run the command again once your edits "
            "are saved.".format(path)) from e
      if stuck:
        raise errors.UpgradeError(
            "{!r} could not be put in place ({}), and what was renamed "
            "before it could not all be put back: {}. Put those back by "
            "hand (or run the command again once the cause is fixed); "
            "nothing else was changed.".format(
                path, errors.describe_os_error(e), "; ".join(
                    "{!r} holds the new version ({}){}".format(
                        changed, errors.describe_os_error(undo_error),
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
      self.leftovers.append((path, errors.describe_os_error(e)))


class _ChangedMeanwhile(OSError):
  """An input file changed between its reading and its replacement."""


def _check_unchanged(path: str, backup: Optional[str],
                     expected: bytes) -> None:
  """Raises `_ChangedMeanwhile` unless `path` holds `expected`.

  Read through `backup` (the hard link of what the rename would replace)
  where there is one, so that what is checked is what would be lost.
  """
  try:
    if os.path.getsize(backup or path) == len(expected):
      with open(backup or path, "rb") as f:
        if f.read() == expected:
          return
  except OSError:
    pass  # Removed, or no longer readable: not what was read.
  raise _ChangedMeanwhile(errno.ESTALE, "changed while the command ran",
                          path)


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
