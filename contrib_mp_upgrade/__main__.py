# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The `contrib-mp-upgrade` command's entry point (and `python -m`).

It answers Ctrl-C from its first moment: importing the command (libcst, a
few tenths of a second) happens after a handler that ends the process with
the same one line the command prints, where Python's default would print a
`KeyboardInterrupt` traceback. Nothing has been read or written by then.
"""

import os
import signal
import sys

_STOP_SIGNALS = tuple(getattr(signal, name) for name in
                      ("SIGINT", "SIGTERM", "SIGHUP")
                      if hasattr(signal, name))


def _stop_while_starting(signum, frame):
  del frame  # Unused.
  os.write(2, "contrib-mp-upgrade: interrupted ({}); nothing was "
              "written.\n".format(signal.Signals(signum).name).encode())
  os._exit(128 + signum)  # pylint: disable=protected-access


def main() -> int:
  previous = {signum: signal.signal(signum, _stop_while_starting)
              for signum in _STOP_SIGNALS}
  from contrib_mp_upgrade import cli  # pylint: disable=g-import-not-at-top
  # From here on the command's own handlers (`cli.main`) take over.
  for signum, handler in previous.items():
    signal.signal(signum, handler)
  return cli.main()


if __name__ == "__main__":
  sys.exit(main())
