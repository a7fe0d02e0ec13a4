# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Reads the CI test matrix, `requirements/environments.toml`.

One reader for everything that needs the matrix: `noxfile.py` (the sessions),
`scripts/gen_compat_table.py` (the README table) and `tests/version_test.py`.
An environment's TensorFlow version is read from the `tensorflow-cpu==` (or,
for TensorFlow's next release, `tf-nightly==`) pin of its requirements file,
so nothing can name a version CI does not install.

Standard library only (`tomllib`; on Python 3.9 and 3.10, which lack it, its
forerunner `tomli`, which pytest brings); it never imports TensorFlow or the
package.

  python scripts/ci_matrix.py   # prints the environments, one per line
"""

from __future__ import annotations  # `str | None` on Python 3.9.

import dataclasses
import os
import re
import sys

try:
  import tomllib
except ImportError:  # Python < 3.11: the tests of the Python 3.9 chroot.
  import tomli as tomllib

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MATRIX_FILE = os.path.join("requirements", "environments.toml")

_PIN = re.compile(r"^\s*(tensorflow[-_.]cpu|tf[-_.]nightly)\s*==\s*"
                  r"([0-9][0-9A-Za-z.]*)\s*(#.*)?$")


@dataclasses.dataclass(frozen=True)
class Environment:
  """One environment of the matrix.

  Attributes:
    name: e.g. "tf216"; also the `--env` name of scripts/run_tests.sh.
    tf_version: the pinned TensorFlow version, e.g. "2.16.2".
    suite: "full" or "core".
    requirements: repository-relative path of its requirements file.
    extra_setup: repository-relative path of scripts/extra_setup_<name>.sh,
      or None when there is none.
    exclude: repository-relative test files its suite leaves out.
    note: free text for the README table ("with Estimator and Horovod").
    python: the Python it runs on, e.g. "3.13".
    debian: the Debian suite whose chroot provides that Python
      (scripts/chroot_env.sh), e.g. "trixie"; None for the host's Python.
    tf_package: the pinned distribution, "tensorflow-cpu" or "tf-nightly".
  """
  name: str
  tf_version: str
  suite: str
  requirements: str
  extra_setup: str | None
  exclude: tuple[str, ...]
  note: str
  python: str
  debian: str | None = None
  tf_package: str = "tensorflow-cpu"

  @property
  def prerelease(self):
    """True for a development build of TensorFlow (tf-nightly)."""
    return self.tf_package == "tf-nightly"

  @property
  def tf_minor(self):
    """"2.16" for TensorFlow 2.16.2."""
    return ".".join(self.tf_version.split(".")[:2])


@dataclasses.dataclass(frozen=True)
class Matrix:
  """The whole matrix.

  Attributes:
    python: the host's interpreter ("3.11"): it runs nox, and every
      environment without a `debian` chroot is built with it.
    bazel_env: the environment whose requirements `bazel test` runs with.
    bazel_exclude: test files whose targets `bazel test` leaves out (those
      `bazel_suite` excludes).
    environments: the environments, in file order.
    suites: {suite name: description}.
  """
  python: str
  bazel_env: str
  bazel_exclude: tuple[str, ...]
  environments: tuple[Environment, ...]
  suites: dict

  def get(self, name):
    """Returns the environment called `name`; KeyError if there is none."""
    for env in self.environments:
      if env.name == name:
        return env
    raise KeyError(name)

  @property
  def pythons(self):
    """The Python versions some environment runs, oldest first."""
    return tuple(sorted({e.python for e in self.environments},
                        key=lambda v: tuple(int(x) for x in v.split("."))))


class MatrixError(ValueError):
  """The matrix file or a requirements file it names is malformed."""


def tf_pin(requirements_path):
  """Returns the TensorFlow pinned in a requirements file.

  Returns:
    (distribution, version): ("tensorflow-cpu", "2.21.0") or
    ("tf-nightly", "2.23.0.dev20261026").

  Raises:
    MatrixError: if the file does not pin exactly one of tensorflow-cpu and
      tf-nightly.
  """
  with open(requirements_path, encoding="utf-8") as f:
    pins = [m.groups()[:2] for m in map(_PIN.match, f) if m]
  if len(pins) != 1:
    raise MatrixError(
        "{} must pin `tensorflow-cpu==X.Y.Z` (or `tf-nightly==X.Y.Z.devN`) "
        "exactly once; found {}.".format(
            requirements_path, ["{}=={}".format(*p) for p in pins]
            or "no pin"))
  package, version = pins[0]
  package = re.sub(r"[-_.]+", "-", package.lower())
  if package == "tf-nightly" and ".dev" not in version:
    raise MatrixError("{} pins tf-nightly=={}; a nightly is a `.devN` "
                      "build.".format(requirements_path, version))
  return package, version


def load(repo=_REPO):
  """Reads and checks `requirements/environments.toml` under `repo`.

  Raises:
    MatrixError: if the file is malformed, names an unknown suite, or an
      environment's requirements file is missing or does not pin one
      tensorflow-cpu.
  """
  path = os.path.join(repo, MATRIX_FILE)
  with open(path, "rb") as f:
    data = tomllib.load(f)

  def fail(message):
    raise MatrixError("{}: {}".format(path, message))

  for key in ("python", "bazel_env", "bazel_suite", "suites", "env"):
    if key not in data:
      fail("missing `{}`.".format(key))
  suites = data["suites"]
  environments = []
  for name, entry in data["env"].items():
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
      fail("environment name {!r} must be lowercase letters, digits and "
           "`_` (it is a session name and a file name).".format(name))
    suite = entry.get("suite")
    if suite not in suites:
      fail("environment {!r} has suite {!r}; expected one of {}.".format(
          name, suite, sorted(suites)))
    requirements = os.path.join("requirements", name + ".txt")
    if not os.path.exists(os.path.join(repo, requirements)):
      fail("environment {!r} has no requirements file {}.".format(
          name, requirements))
    extra_setup = os.path.join("scripts", "extra_setup_{}.sh".format(name))
    # Not checked for existence here (Bazel's runfiles hold only what a test
    # declares); tests/ci_matrix_test.py checks it.
    exclude = tuple(suites[suite].get("exclude", ()))
    python = str(entry.get("python", data["python"]))
    debian = entry.get("debian")
    if not re.fullmatch(r"3\.\d+", python):
      fail("environment {!r} has python {!r}; expected \"3.N\".".format(
          name, python))
    if python != str(data["python"]) and not debian:
      fail("environment {!r} runs Python {}, not the host's {}: name the "
           "Debian suite that ships it, e.g. `debian = \"trixie\"`.".format(
               name, python, data["python"]))
    tf_package, tf_version = tf_pin(os.path.join(repo, requirements))
    environments.append(Environment(
        name=name,
        tf_version=tf_version,
        tf_package=tf_package,
        python=python,
        debian=debian,
        suite=suite,
        requirements=requirements,
        extra_setup=(extra_setup
                     if os.path.exists(os.path.join(repo, extra_setup))
                     else None),
        exclude=exclude,
        note=entry.get("note", "")))
  if not environments:
    fail("no environments.")
  names = [e.name for e in environments]
  if data["bazel_env"] not in names:
    fail("bazel_env {!r} is not one of the environments {}.".format(
        data["bazel_env"], names))
  if data["bazel_suite"] not in suites:
    fail("bazel_suite {!r} is not one of the suites {}.".format(
        data["bazel_suite"], sorted(suites)))
  return Matrix(python=str(data["python"]), bazel_env=data["bazel_env"],
                bazel_exclude=tuple(
                    suites[data["bazel_suite"]].get("exclude", ())),
                environments=tuple(environments),
                suites={k: v.get("description", "") for k, v in
                        suites.items()})


def main():
  matrix = load()
  for env in matrix.environments:
    print("{}\t{} {}\tPython {}{}\t{} suite\t{}".format(
        env.name, env.tf_package, env.tf_version, env.python,
        " (Debian {} chroot)".format(env.debian) if env.debian else "",
        env.suite, env.requirements))
  print("bazel\t{} requirements\tleaves out {}".format(
      matrix.bazel_env, ", ".join(matrix.bazel_exclude) or "nothing"))
  return 0


if __name__ == "__main__":
  sys.exit(main())
