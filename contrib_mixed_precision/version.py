# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Version of this package and the TensorFlow range it supports.

This is the single source of these facts: `setup.py` (the extras, and
`python_requires` from the Python versions of the supported TensorFlow range),
the import-time check in `_tf_compat.py` and the README's compatibility table
all derive from it (`tests/version_test.py` checks that they agree). Which
TensorFlow versions CI tests is the matrix's business:
`requirements/environments.toml`.

This module must not import TensorFlow: `setup.py` executes it.
"""

__version__ = "0.1.0"

# Supported TensorFlow versions:
# MIN_TF_VERSION <= tf.__version__ < MAX_TF_VERSION.
MIN_TF_VERSION = "2.15.0"
MAX_TF_VERSION = "2.22.0"

# The pip requirement string for the supported range, used by setup.py extras.
TF_REQUIREMENT_RANGE = ">={},<{}".format(MIN_TF_VERSION, MAX_TF_VERSION)

# The Python versions each supported TensorFlow minor publishes wheels for
# (tensorflow and tensorflow-cpu on PyPI), oldest and newest. Which of them CI
# tests is in requirements/environments.toml (the matrix), not here.
TF_PYTHON_VERSIONS = {
    "2.15": ("3.9", "3.11"),
    "2.16": ("3.9", "3.12"),
    "2.17": ("3.9", "3.12"),
    "2.18": ("3.9", "3.12"),
    "2.19": ("3.9", "3.12"),
    "2.20": ("3.9", "3.13"),
    "2.21": ("3.10", "3.13"),
}


def _as_tuple(version):
  return tuple(int(part) for part in version.split("."))


# Derived: the package installs on every Python for which some supported
# TensorFlow exists. No upper bound: a cap would make pip fall back to an
# older release of this package on a newer Python, and a TensorFlow built for
# that Python (a vendor's, or a newer one, which warns on import) still works.
MIN_PYTHON_VERSION = min(
    (low for low, _ in TF_PYTHON_VERSIONS.values()), key=_as_tuple)
MAX_PYTHON_VERSION = max(
    (high for _, high in TF_PYTHON_VERSIONS.values()), key=_as_tuple)
PYTHON_REQUIREMENT = ">=" + MIN_PYTHON_VERSION
SUPPORTED_PYTHON_VERSIONS = tuple(
    "3.{}".format(minor)
    for minor in range(_as_tuple(MIN_PYTHON_VERSION)[1],
                       _as_tuple(MAX_PYTHON_VERSION)[1] + 1))

# The Python versions CI runs (the `python` of the environments in
# requirements/environments.toml; tests/version_test.py checks that they
# agree). setup.py names them, and only them, in the wheel's classifiers:
# Python 3.10 and 3.12 are inside the range but untested.
CI_PYTHON_VERSIONS = ("3.9", "3.11", "3.13")
