# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""`python -m contrib_mp_upgrade`: the `contrib-mp-upgrade` command."""

import sys

from contrib_mp_upgrade import cli

if __name__ == "__main__":
  sys.exit(cli.main())
