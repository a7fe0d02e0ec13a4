#!/usr/bin/env python3
# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Runs the `contrib-mp-upgrade` command from a source checkout.

The same as the installed `contrib-mp-upgrade` console script and
`python -m contrib_mp_upgrade`; see `--help`. Needs only Python and libcst:
it never imports TensorFlow.

  scripts/contrib_mp_upgrade.py --intree old/ --outtree new/
"""

import os
import sys

# Prefer this checkout's package over an installed one when run from source.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))

# pylint: disable=g-import-not-at-top,wrong-import-position
# The console script's entry point, not `cli`: without libcst it prints the
# one paragraph with the install command, not a traceback, and it answers
# Ctrl-C while the command is imported.
from contrib_mp_upgrade.__main__ import main
# pylint: enable=g-import-not-at-top,wrong-import-position

if __name__ == "__main__":
  sys.exit(main())
