# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The command's error, and how an operating-system error reads in it.

`UpgradeError` is what every part of a run raises when the command cannot
do its job (a path that cannot work, a dead worker, a write that failed);
the command prints its message in one line and exits with status 1.
Nothing was written when it is raised. `describe_os_error` words the cause
of an `OSError` without the file name, which the message names itself.

This module needs only the standard library.
"""


class UpgradeError(Exception):
  """The command could not do its job; nothing was written."""


def describe_os_error(error: OSError) -> str:
  """`[Errno 28] No space left on device`, without the file name."""
  if error.errno is not None and error.strerror:
    return "[Errno {}] {}".format(error.errno, error.strerror)
  return str(error)

