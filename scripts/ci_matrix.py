# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Reads the CI test matrix, `requirements/environments.toml`.

One reader for everything that needs the matrix: `noxfile.py` (the sessions),
`scripts/gen_compat_table.py` (the README table), `tests/version_test.py`,
and `scripts/run_tests.sh`, which asks it which environments this machine can
run (`plan`) before it starts nox.
An environment's TensorFlow version is read from the `tensorflow-cpu==` (or,
for TensorFlow's next release, `tf-nightly==`) pin of its requirements file,
so nothing can name a version CI does not install.

Standard library only (`tomllib`; on Python 3.9 and 3.10, which lack it, its
forerunner `tomli`, which pytest brings); it never imports TensorFlow or the
package.

  python scripts/ci_matrix.py        # prints the environments, one a line
  python scripts/ci_matrix.py plan [--env NAMES]
      # what scripts/run_tests.sh will run here, skip, or fail, and why
  python scripts/ci_matrix.py quick
      # the environment of `scripts/run_tests.sh --quick`
"""

from __future__ import annotations  # `str | None` on Python 3.9.

import argparse
import dataclasses
import os
import re
import shutil
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
    suite: the name of its suite, e.g. "full" or "core".
    requirements: repository-relative path of its requirements file.
    extra_setup: repository-relative path of scripts/extra_setup_<name>.sh,
      or None when there is none.
    exclude: repository-relative test files it leaves out: its suite's
      `exclude` and its own, less its own `include`. Empty for a suite of
      `only` its include.
    note: free text for the README table ("with Estimator and Horovod").
    python: the Python it runs on, e.g. "3.13".
    debian: the Debian suite whose chroot provides that Python
      (scripts/chroot_env.sh), e.g. "trixie"; None for the host's Python.
    tf_package: the pinned distribution, "tensorflow-cpu" or "tf-nightly".
    include: test files its suite leaves out that it runs all the same: its
      own `include`, and on the host's Python the matrix's `[host]` files.
    only: True when its suite runs nothing but `include` (an environment
      whose other tests another one runs on the same TensorFlow).
    own_exclude: the files it leaves out beyond its suite's `exclude`.
    host: the `[host]` files among `include`, and what they are in words
      (`[host]`'s `description`): `()` and "" in a `debian` chroot.
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
  include: tuple[str, ...] = ()
  only: bool = False
  own_exclude: tuple[str, ...] = ()
  host: tuple[str, ...] = ()
  host_description: str = ""

  def runs(self, test):
    """True when this environment runs `test` ("tests/x_test.py")."""
    if self.only:
      return test in self.include
    return test not in self.exclude

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
    bazel_suite: the suite whose files `bazel test` runs, e.g. "core".
    environments: the environments, in file order.
    suites: {suite name: description}.
    suite_exclude: {suite name: the test files it leaves out}.
    host_include: the files every environment on the host's Python runs
      besides its suite (`[host]`), and host_description, what they are.
  """
  python: str
  bazel_env: str
  bazel_exclude: tuple[str, ...]
  bazel_suite: str
  environments: tuple[Environment, ...]
  suites: dict
  suite_exclude: dict = dataclasses.field(default_factory=dict)
  host_include: tuple[str, ...] = ()
  host_description: str = ""

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
  host = data.get("host", {})
  host_include = tuple(host.get("include", ()))
  if host_include and not host.get("description"):
    fail("`[host]` names files without a `description` (the README's words "
         "for them).")
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
    include = tuple(entry.get("include", ()))
    own_exclude = tuple(entry.get("exclude", ()))
    only = bool(suites[suite].get("only", False))
    suite_exclude = tuple(suites[suite].get("exclude", ()))
    debian = entry.get("debian")
    added = () if debian else tuple(
        t for t in host_include
        if t not in include and (only or t in suite_exclude + own_exclude))
    if only and (suite_exclude or own_exclude or not include + added):
      fail("environment {!r} has suite {!r}, which runs only the files its "
           "environment's `include` names: give it an `include` and no "
           "`exclude`.".format(name, suite))
    extra = [t for t in include
             if not only and t not in suite_exclude + own_exclude]
    if extra:
      fail("environment {!r} includes {}, which its suite {!r} runs "
           "anyway; `include` is for files the suite leaves out.".format(
               name, ", ".join(extra), suite))
    twice = [t for t in own_exclude if t in suite_exclude]
    if twice:
      fail("environment {!r} excludes {}, which its suite {!r} excludes "
           "already.".format(name, ", ".join(twice), suite))
    include += added
    exclude = tuple(t for t in suite_exclude + own_exclude
                    if t not in include)
    python = str(entry.get("python", data["python"]))
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
        include=include,
        only=only,
        own_exclude=own_exclude,
        host=added,
        host_description=host.get("description", "") if added else "",
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
  if suites[data["bazel_suite"]].get("only"):
    fail("bazel_suite {!r} runs only an environment's `include`, and Bazel "
         "has none: name a suite of `exclude`s, one of {}.".format(
             data["bazel_suite"],
             sorted(k for k, v in suites.items() if not v.get("only"))))
  return Matrix(python=str(data["python"]), bazel_env=data["bazel_env"],
                bazel_exclude=tuple(
                    suites[data["bazel_suite"]].get("exclude", ())),
                bazel_suite=data["bazel_suite"],
                environments=tuple(environments),
                suites={k: v.get("description", "") for k, v in
                        suites.items()},
                suite_exclude={k: tuple(v.get("exclude", ())) for k, v in
                               suites.items()},
                host_include=host_include,
                host_description=host.get("description", ""))


def label(matrix, name):
  """The environment `name` (or "bazel") as the run's summary names it.

  Under `run_tests.sh --quick` (CMP_QUICK=1) an environment runs the
  quick suite, and is named so.
  """
  if name != "bazel" and os.environ.get("CMP_QUICK") == "1":
    env = matrix.get(name)
    return "{} (TF {}, {} suite: --quick)".format(env.name, env.tf_version,
                                                 QUICK_SUITE)
  if name == "bazel":
    env = matrix.get(matrix.bazel_env)
    return "bazel (TF {} from {})".format(env.tf_version, env.requirements)
  env = matrix.get(name)
  return "{} (TF {}{}, {})".format(
      env.name, env.tf_version,
      ", Python {}".format(env.python) if env.debian else "", runs(env))


def runs(env, quote=lambda name: name):
  """What `env` runs, in words: "core suite + a.py + b.py", "only a.py"."""
  def names(tests, sep):
    return sep.join(quote(os.path.basename(t)) for t in tests)
  own = [t for t in env.include if t not in env.host]
  added = [names(own, " + ")] if own else []
  if env.host:
    added.append(env.host_description)
  if env.only:
    return "only " + " + ".join(added)
  text = "{} suite".format(env.suite)
  if env.own_exclude:
    text += " less " + names(env.own_exclude, ", ")
  if added:
    text += " + " + " + ".join(added)
  return text


QUICK_SUITE = "core"


def quick_env(matrix):
  """The environment of `scripts/run_tests.sh --quick`, the five-minute check.

  The newest TensorFlow release (no nightly) on the host's Python; the check
  runs the core suite there, whatever that environment's own suite is.
  """
  host = [e for e in matrix.environments
          if not e.debian and not e.prerelease]
  return max(host, key=lambda e: tuple(
      int(p) for p in e.tf_version.split(".")[:3] if p.isdigit())).name


def names(matrix):
  """Every name `scripts/run_tests.sh --env` accepts, in the run's order."""
  return [e.name for e in matrix.environments] + ["bazel"]


@dataclasses.dataclass(frozen=True)
class Step:
  """What one run does with one environment.

  Attributes:
    name: the environment, or "bazel".
    action: "run"; "skip" (a prerequisite is missing, and the environment was
      neither named with `--env` nor is this CI); or "fail" (a prerequisite
      is missing, and it was named, or this is CI, where nothing is skipped).
    reason: for "skip" and "fail", what is missing.
    enable: for "skip" and "fail", the command that makes it run.
  """
  name: str
  action: str
  reason: str = ""
  enable: str = ""


def _tool(which, name):
  """`name`'s path, looking in sbin too (not on every user's PATH)."""
  return which(name) or which(name, path="/usr/sbin:/sbin")


def missing_prerequisite(matrix, name, uid=None, which=shutil.which):
  """What environment `name` needs and this machine lacks.

  An environment on the host's Python needs nothing but the Python that
  runs this. A chroot environment needs root (debootstrap, mount and chroot
  do) and debootstrap; `bazel` needs bazel. A missing tool is no obstacle
  for root on a Debian machine: the session installs it with
  scripts/install_system_deps.sh.

  Args:
    matrix: the matrix, from `load`.
    name: an environment of `names(matrix)`.
    uid: the user id to judge for (default: this process's).
    which: `shutil.which`, or a stand-in.

  Returns:
    None when it can run; else (reason, command that enables it).
  """
  uid = os.getuid() if uid is None else uid
  installs = uid == 0 and _tool(which, "apt-get") is not None
  if name == "bazel":
    tools = {"bazel": "bazel-bootstrap"}
  else:
    env = matrix.get(name)
    if not env.debian:
      return None
    if uid != 0:
      return ("needs root: it builds and enters a Debian {} chroot for "
              "Python {} (debootstrap, mount and chroot need root); this is "
              "uid {}".format(env.debian, env.python, uid),
              "sudo scripts/run_tests.sh --env {}".format(name))
    tools = {"debootstrap": "debootstrap", "unshare": "util-linux",
             "chroot": "coreutils", "findmnt": "util-linux",
             "flock": "util-linux"}
  lacking = [t for t in tools if _tool(which, t) is None]
  if not lacking or installs:
    return None
  packages = sorted({tools[t] for t in lacking})
  listed = ", ".join("`{}`".format(t) for t in lacking)
  if _tool(which, "apt-get") is None:
    enable = "install {} with this system's package manager".format(listed)
  elif set(packages) <= {"bazel-bootstrap", "debootstrap"}:
    enable = "sudo scripts/install_system_deps.sh"
  else:
    enable = "sudo apt-get install {}".format(" ".join(packages))
  return ("{} not installed".format(
      listed + (" is" if len(lacking) == 1 else " are")), enable)


def _ci():
  """True under CI (`CI=true`, as CI services set it)."""
  return os.environ.get("CI", "").strip().lower() not in (
      "", "0", "false", "no")


def plan(matrix, selected=None, ci=None, uid=None, which=shutil.which):
  """Decides, for each environment of a run, to run, skip or fail it.

  Args:
    matrix: the matrix, from `load`.
    selected: the names given with `--env`, in their order; None for all.
    ci: whether this is CI (default: the `CI` variable); then nothing is
      skipped.
    uid, which: as for `missing_prerequisite`.

  Returns:
    A list of `Step`, one per environment, in the run's order.

  Raises:
    MatrixError: if `selected` names an unknown environment.
  """
  ci = _ci() if ci is None else ci
  known = names(matrix)
  if selected is not None:
    unknown = [n for n in selected if n not in known]
    if unknown:
      raise MatrixError("unknown environment(s) {}; choose from {}.".format(
          ", ".join(unknown), ", ".join(known)))
  steps = []
  for name in known if selected is None else selected:
    missing = missing_prerequisite(matrix, name, uid=uid, which=which)
    if missing is None:
      steps.append(Step(name, "run"))
    else:
      steps.append(Step(name, "fail" if ci or selected is not None
                        else "skip", *missing))
  return steps


def main(argv=None):
  parser = argparse.ArgumentParser(
      description="Lists the CI matrix, or plans a run of it.")
  sub = parser.add_subparsers(dest="command")
  plan_parser = sub.add_parser(
      "plan", help="one tab-separated line per environment: action, name, "
      "label, reason, command that enables it")
  plan_parser.add_argument("--env", default=None,
                           help="comma-separated environments (default: all)")
  sub.add_parser("quick", help="the environment `run_tests.sh --quick` uses")
  args = parser.parse_args(argv)
  try:
    matrix = load()
    if args.command == "plan":
      steps = plan(matrix, args.env.split(",") if args.env else None)
  except MatrixError as e:
    print("ci_matrix: {}".format(e), file=sys.stderr)
    return 2
  if args.command == "quick":
    print(quick_env(matrix))
    return 0
  if args.command == "plan":
    for step in steps:
      print("\t".join([step.action, step.name, label(matrix, step.name),
                       step.reason, step.enable]))
    return 0
  for env in matrix.environments:
    print("{}\t{} {}\tPython {}{}\t{}\t{}".format(
        env.name, env.tf_package, env.tf_version, env.python,
        " (Debian {} chroot)".format(env.debian) if env.debian else "",
        runs(env), env.requirements))
  print("bazel\t{} requirements\tleaves out {}".format(
      matrix.bazel_env, ", ".join(matrix.bazel_exclude) or "nothing"))
  return 0


if __name__ == "__main__":
  sys.exit(main())
