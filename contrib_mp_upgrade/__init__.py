# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""`contrib-mp-upgrade`: rewrites `tf.contrib.mixed_precision` in source trees.

`tf_upgrade_v2` marks every `tf.contrib.mixed_precision` use as "cannot be
converted". This package converts them to `contrib_mixed_precision`, and is
the code behind the `contrib-mp-upgrade` command (also `python -m
contrib_mp_upgrade`).

It is a package of its own, in the same distribution as
`contrib_mixed_precision`, because it runs where the legacy code lives:
often a machine with TensorFlow 1.15, or with no TensorFlow at all.
Importing anything under `contrib_mixed_precision` imports TensorFlow 2;
this package needs only the standard library and libcst, and never imports
either TensorFlow or `contrib_mixed_precision` (tests/upgrade_standalone_test
runs it in a virtualenv that has neither).

It rewrites every way TF 1.15 code reached the API, in every scope:

* `tf.contrib.mixed_precision.X`, whatever name `tensorflow` (or
  `tensorflow.compat.v1`, or TF 1.15's real package `tensorflow_core`) was
  bound to, `getattr(tf.contrib, "mixed_precision")`, and uses through a
  name bound to `tf.contrib` itself;
* `importlib.import_module("tensorflow.contrib.mixed_precision...")` and
  `__import__(...)` with literal module names;
* `from tensorflow.contrib.mixed_precision import X, Y` (a star import
  becomes TF 1.15's four names);
* `from tensorflow.contrib import mixed_precision [as m]`;
* `import tensorflow.contrib.mixed_precision as m`;
* the module paths `...mixed_precision.python.loss_scale_manager` and
  `.loss_scale_optimizer`.

The modules, in the order a run's data flows through them:

* `options`: the command's flags, `--help` and `--version` (no libcst);
* `cli`: the flags' checks, and one run (`run`, `main`);
* `walk`: reads the input tree (or file) into a plan; writes nothing;
* `notebook`: a notebook's code cells as one Python source, and back;
* `workers`: the worker processes that convert the files with libcst;
* `rewrite`: upgrades one source (`upgrade_source`) and applies the edits;
* `syntax`: TF 1.15 module paths and the libcst node helpers;
* `resolve`: name resolution, which TF path an expression is, per scope;
* `uses`: use classification, what to rewrite and what to report;
* `guards`: why a rewrite may not run on TF 2 (version checks, fallbacks);
* `slim`: `--contrib-to-slim`, the contrib names `tf_slim` provides;
* `tf_upgrade_v2_pass`: runs TensorFlow's `tf_upgrade_v2` over the plan,
  and makes the renames that only its versions up to TF 2.15 made;
* `blockers`: what still stops each converted file on TF 2, and the fix;
* `report`: the report text;
* `commit`: writes the plan and the report all or nothing.

Beside the flow: `signals` turns Ctrl-C (or SIGTERM, SIGHUP) into a clean
stop, `errors` holds the command's error (`UpgradeError`), and `check` is
`--check`, which reads through `walk` and writes nothing.

Files that do not use the API are copied byte for byte. The report says what
changed in each file, which other `tf.contrib` modules it still uses, which
rewrites sit under version checks or import fallbacks, and what is left to
do by hand.
"""

import importlib

# Each public name, and the module that defines it. They are imported on
# first use (PEP 562), so that the command's entry point can answer Ctrl-C
# before libcst is imported.
_EXPORTS = {
    "FileResult": "contrib_mp_upgrade.rewrite",
    "Outcome": "contrib_mp_upgrade.cli",
    "UpgradeError": "contrib_mp_upgrade.errors",
    "main": "contrib_mp_upgrade.cli",
    "run": "contrib_mp_upgrade.cli",
    "upgrade_source": "contrib_mp_upgrade.rewrite",
}


def __getattr__(name):
  if name not in _EXPORTS:
    raise AttributeError(
        "module 'contrib_mp_upgrade' has no attribute {!r}".format(name))
  return getattr(importlib.import_module(_EXPORTS[name]), name)


def __dir__():
  return sorted(list(globals()) + list(_EXPORTS))

__all__ = [
    "FileResult",
    "Outcome",
    "UpgradeError",
    "main",
    "run",
    "upgrade_source",
]
