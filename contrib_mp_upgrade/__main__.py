# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The `contrib-mp-upgrade` command's entry point (and `python -m`).

It answers Ctrl-C from its first moment: importing the command (libcst, a
few tenths of a second) happens after a handler that ends the process with
the same one line the command prints, where Python's default would print a
`KeyboardInterrupt` traceback. Nothing has been read or written by then.

It parses the flags (`options`, standard library only) before it imports
the conversion, so `--help` and `--version` work without libcst.
"""

import os
import signal
import sys

from contrib_mp_upgrade import options

_STOP_SIGNALS = tuple(getattr(signal, name) for name in
                      ("SIGINT", "SIGTERM", "SIGHUP")
                      if hasattr(signal, name))


_NO_LIBCST = (
    "contrib-mp-upgrade: error: this command needs libcst, which "
    "could not be imported ({{}}) by {}. It is the `[upgrade]` extra:\n"
    "  pip install 'contrib_mixed_precision[upgrade]'\n"
    "(or `pip install libcst`) installs it; the command never needs "
    "TensorFlow.\n").format(sys.executable)


def _stop_while_starting(signum, frame):
  del frame  # Unused.
  os.write(2, "contrib-mp-upgrade: interrupted ({}); nothing was "
              "written.\n".format(signal.Signals(signum).name).encode())
  os._exit(128 + signum)  # pylint: disable=protected-access


def _open_closed_standard_streams() -> None:
  """Gives a closed stdin, stdout or stderr (`2>&-`) /dev/null instead.

  Else the next file opened takes its number, and a message meant for the
  terminal lands in it; Python also sets `sys.stderr` to None, and the
  command failed on its first message, without a word.
  """
  for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"),
                         (2, "stderr", "w")):
    try:
      os.fstat(fd)
    except OSError:
      null = os.open(os.devnull, os.O_RDWR)  # The lowest free number: fd.
      if null != fd:
        os.dup2(null, fd)
        os.close(null)
    if getattr(sys, name) is None:
      setattr(sys, name, open(fd, mode, closefd=False))


def main() -> int:
  previous = {signum: signal.signal(signum, _stop_while_starting)
              for signum in _STOP_SIGNALS}
  _open_closed_standard_streams()
  # The flags first, with the standard library only: `--help`, `--version`
  # and a bad flag need no libcst, which only the conversion uses.
  options.parser().parse_intermixed_args()
  try:
    from contrib_mp_upgrade import cli  # pylint: disable=g-import-not-at-top
  except ImportError as e:
    # libcst is the `[upgrade]` extra: a plain `pip install
    # contrib_mixed_precision` lacks it, and a run printed a traceback.
    # (`rewrite` re-raises libcst's ImportError with a hint, from it.)
    cause = e.__cause__ if isinstance(e.__cause__, ImportError) else e
    if not (cause.name or "").split(".")[0] == "libcst":
      raise
    sys.stderr.write(_NO_LIBCST.format(cause))
    return 1
  # From here on the command's own handlers (`cli.main`) take over.
  for signum, handler in previous.items():
    signal.signal(signum, handler)
  try:
    return cli.main()
  except BrokenPipeError:
    # What reads the output went away (`--dry_run | head`): stop without a
    # word, as a tool that SIGPIPE ends does, and let Python's own flush
    # at exit find /dev/null.
    cli.stdout_to_devnull()
    return 128 + 13  # SIGPIPE's number, which Windows does not name.


if __name__ == "__main__":
  sys.exit(main())
