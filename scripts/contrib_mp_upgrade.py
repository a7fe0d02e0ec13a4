#!/usr/bin/env python3
# Copyright 2026 The contrib_mixed_precision Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ==============================================================================
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
from contrib_mp_upgrade import cli
# pylint: enable=g-import-not-at-top,wrong-import-position

if __name__ == "__main__":
  sys.exit(cli.main())
