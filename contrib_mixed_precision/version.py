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
"""Version of this package and the TensorFlow range it supports.

This is the single source of both facts: `setup.py`, the import-time check in
`_tf_compat.py` and the README's compatibility table all derive from it (the
README table is checked against it by `tests/version_test.py`).

This module must not import TensorFlow: `setup.py` executes it.
"""

__version__ = "0.1.0"

# Supported TensorFlow versions: MIN_TF_VERSION <= tf.__version__ < MAX_TF_VERSION.
MIN_TF_VERSION = "2.15.0"
MAX_TF_VERSION = "2.22.0"

# The TensorFlow versions the test matrix runs (scripts/run_tests.sh). Versions
# inside the range but not listed here are supported but only spot-checked.
TESTED_TF_VERSIONS = ("2.15.1", "2.21.0")

# The pip requirement string for the supported range, used by setup.py extras.
TF_REQUIREMENT_RANGE = ">={},<{}".format(MIN_TF_VERSION, MAX_TF_VERSION)
