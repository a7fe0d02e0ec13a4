# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""How a Ctrl-C (SIGINT, SIGTERM, SIGHUP) stops the command, cleanly.

`stop_on_signals` turns the first stop signal into `Interrupted`, which
unwinds the run: the workers are ended and whatever was staged is removed
on the way out. `signals_deferred` holds the signals while a step that
must not be cut in half runs: the renames into place, or a staged file and
the undo that removes it (`commit`). The worker processes (`workers`)
ignore Ctrl-C and leave the decision to the command.

This module needs only the standard library.
"""

import contextlib
import signal
import threading
from typing import Iterator


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
STOP_SIGNALS = tuple(getattr(signal, name) for name in
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
    for other in STOP_SIGNALS:
      signal.signal(other, signal.SIG_IGN)
    raise Interrupted(signum)

  previous = {signum: signal.signal(signum, stop)
              for signum in STOP_SIGNALS}
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
  previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
  try:
    yield
  finally:
    signal.pthread_sigmask(signal.SIG_SETMASK, previous)

