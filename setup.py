# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Packaging for contrib_mixed_precision.

TensorFlow is deliberately not in `install_requires`: users have tensorflow,
tensorflow-cpu, tensorflow-macos or a vendor build, and pip would pull a second
copy next to theirs. The `[tensorflow]` and `[tensorflow-cpu]` extras pin the
supported range instead, and the package checks the installed TensorFlow at
import time.
"""

import os

from setuptools import find_packages
from setuptools import setup

_HERE = os.path.dirname(os.path.abspath(__file__))


def _read_version_module():
  """Executes version.py on its own and returns its globals.

  Importing the package would import TensorFlow, which need not be installed
  at build time; version.py itself imports nothing.
  """
  path = os.path.join(_HERE, "contrib_mixed_precision", "version.py")
  namespace = {}
  with open(path, encoding="utf-8") as f:
    exec(compile(f.read(), path, "exec"), namespace)  # pylint: disable=exec-used
  return namespace


def _read_long_description():
  with open(os.path.join(_HERE, "README.md"), encoding="utf-8") as f:
    return f.read()


_VERSION = _read_version_module()
_TF_RANGE = _VERSION["TF_REQUIREMENT_RANGE"]

EXTRAS_REQUIRE = {
    "tensorflow": ["tensorflow" + _TF_RANGE],
    "tensorflow-cpu": ["tensorflow-cpu" + _TF_RANGE],
    "test": [
        "absl-py",
        "hypothesis",
        "libcst",
        "matplotlib",
        "pytest",
        "pytest-xdist",
    ],
    "demo": ["matplotlib", "tensorboard"],
    # The `contrib-mp-upgrade` command (the `contrib_mp_upgrade` package)
    # needs only libcst; it never imports TensorFlow.
    "upgrade": ["libcst"],
    # TF1 `tf.layers` / `tf.compat.v1.layers` code on TF 2.16+ needs Keras 2,
    # which ships as tf-keras, versioned with TensorFlow (tf-keras 2.N needs
    # TensorFlow 2.N), plus TF_USE_LEGACY_KERAS=1; see docs/migration.md.
    # Only for the `tensorflow` package: tf-keras requires it, so beside
    # `tensorflow-cpu` this extra installs a second TensorFlow. There,
    # `pip install --no-deps 'tf-keras~=2.N.0'` (the report's advice).
    "legacy-keras": ["tf-keras" + _TF_RANGE],
    # `tf.contrib.layers`, `tf.contrib.framework` (`arg_scope`) and
    # `tf.contrib.slim` live on unchanged in tf-slim, the maintained drop-in
    # the upgrade report points to. Its layers build on
    # `tf.compat.v1.layers`, so on TF 2.16+ it needs `[legacy-keras]` too.
    "slim": ["tf-slim>=1.1.0"],
}

setup(
    name="contrib_mixed_precision",
    version=_VERSION["__version__"],
    description=("TensorFlow 1.15's tf.contrib.mixed_precision API "
                 "(LossScaleManager, LossScaleOptimizer) on TensorFlow 2."),
    long_description=_read_long_description(),
    long_description_content_type="text/markdown",
    author="The contrib_mixed_precision Authors",
    license="Apache-2.0",
    # contrib_mp_upgrade is the upgrade command: a package of its own, so
    # that running it never imports contrib_mixed_precision (or TensorFlow).
    packages=find_packages(
        include=["contrib_mixed_precision", "contrib_mixed_precision.*",
                 "contrib_mp_upgrade", "contrib_mp_upgrade.*"]),
    # From the Python versions of the supported TensorFlow range (version.py).
    python_requires=_VERSION["PYTHON_REQUIREMENT"],
    install_requires=[
        "absl-py",
        "packaging",
    ],
    extras_require=EXTRAS_REQUIRE,
    entry_points={
        "console_scripts": [
            "contrib-mp-upgrade=contrib_mp_upgrade.__main__:main",
        ],
    },
    classifiers=[
        "Development Status :: 3 - Alpha",
        "Intended Audience :: Developers",
        "Intended Audience :: Science/Research",
        "Programming Language :: Python :: 3",
    ] + [
        # Only the versions CI runs; python_requires admits the whole range.
        "Programming Language :: Python :: " + v
        for v in _VERSION["CI_PYTHON_VERSIONS"]
    ] + [
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
    keywords="tensorflow mixed-precision loss-scaling tf.contrib",
)
